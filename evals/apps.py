from django.apps import AppConfig


class EvalsConfig(AppConfig):
    name = "evals"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # evals depends on memories, never the reverse: it hears of changes to retrieval through this hook.
        from evals.services import eval_after_change
        from memories import extensions

        extensions.on_retrieval_changed(eval_after_change)
