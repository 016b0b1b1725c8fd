from memories.services.remember import *  # noqa: F403 (the next commit splits remember.py by use case)
from memories.services.remember import _clean_reason, _reject_secret_session_id  # noqa: F401
