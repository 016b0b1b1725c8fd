"""Django database backend for Kenfold's database: PostgreSQL's, sending vectors in binary, and starting
the embedded server on first use when there is one."""
