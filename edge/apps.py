from django.apps import AppConfig


class EdgeConfig(AppConfig):
    """Installed so that Django finds the `serve` and `mcp` commands (edge/management/commands)."""

    name = "edge"
