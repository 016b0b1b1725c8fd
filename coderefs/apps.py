from django.apps import AppConfig


class CoderefsConfig(AppConfig):
    name = "coderefs"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # coderefs depends on memories, never the reverse: it hooks into memories' writes and views here.
        from coderefs.selectors import attach_code_refs
        from coderefs.services import refs_record
        from memories import extensions

        extensions.on_memory_inserted(refs_record)
        extensions.on_views_presented(attach_code_refs)
