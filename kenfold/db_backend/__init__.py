"""Django database backend for the embedded server: PostgreSQL's, started on first use."""
