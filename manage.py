#!/usr/bin/env python
"""Django's command-line utility for Kenfold."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kenfold.settings")
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured

    try:
        # Loads kenfold.settings, which checks every KENFOLD_* variable: a bad one is the owner's to fix,
        # so they get its message, not a traceback through Django's internals.
        settings.INSTALLED_APPS  # noqa: B018
    except ImproperlyConfigured as exc:
        sys.exit(f"Kenfold cannot start: {exc}")

    from kenfold.management.utility import KenfoldManagementUtility

    KenfoldManagementUtility(sys.argv).execute()


if __name__ == "__main__":
    main()
