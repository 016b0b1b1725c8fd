"""Poisoning screen: placeholder, filled in by the next commit."""


def screen(text: str) -> list[str]:
    return []
