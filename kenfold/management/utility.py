"""`manage.py` itself: Django's command-line utility, with Kenfold's own commands listed first in its help
and Django's and the libraries' behind `manage.py help --all`."""

import re
from collections import defaultdict

from django.conf import settings
from django.core.management import ManagementUtility, get_commands, load_command_class
from django.core.management.color import color_style


class KenfoldManagementUtility(ManagementUtility):
    def main_help_text(self, commands_only: bool = False) -> str:
        commands = get_commands()
        ours = sorted(name for name, app in commands.items() if _is_ours(app))
        if commands_only or not ours:  # without settings, Django lists only its own commands
            return super().main_help_text(commands_only=commands_only)
        style = color_style()
        width = max(len(name) for name in ours)
        lines = [
            "",
            f"Type '{self.prog_name} help <command>' for help on a command.",
            "",
            style.NOTICE("Kenfold commands:"),
            *(f"    {name.ljust(width)}  {_summary(commands[name], name)}" for name in ours),
            "",
        ]
        if "--all" not in self.argv[2:]:
            lines.append(
                f"Django's own commands (migrate, shell, ...) and those of the libraries: "
                f"`{self.prog_name} help --all`."
            )
            return "\n".join(lines)
        by_app: dict[str, list[str]] = defaultdict(list)
        for name, app in commands.items():
            if not _is_ours(app):
                by_app["django" if app == "django.core" else app.rpartition(".")[-1]].append(name)
        lines.append(style.NOTICE("Django's and the libraries' commands:"))
        for app in sorted(by_app):
            lines += ["", f"[{app}]", *(f"    {name}" for name in sorted(by_app[app]))]
        return "\n".join(lines)


def _is_ours(app: str) -> bool:
    """Kenfold's apps are the top-level folders of this repository."""
    return "." not in app and (settings.BASE_DIR / app / "management").is_dir()


def _summary(app: str, name: str) -> str:
    """The first sentence of the command's help."""
    help_text = str(load_command_class(app, name).help).strip()
    return re.split(r"(?<=\.)\s", help_text, maxsplit=1)[0]
