"""Textual themes shipped with promptdeck: dark, light and high contrast.

The app registers every theme in :data:`THEMES` at start; the user picks one from the command
palette and the choice is remembered in the user's settings file. Stylesheets use only theme
variables (``$primary``, ``$warning``, ``$error``, …), so every region follows the theme.
"""

from __future__ import annotations

from textual.theme import Theme

DARK = Theme(
    name="promptdeck-dark",
    primary="#5FA8D3",
    secondary="#3E6A8A",
    accent="#F2A541",
    warning="#F2C14E",
    error="#E5484D",
    success="#46A758",
    foreground="#D8DEE4",
    background="#15191E",
    surface="#1C2128",
    panel="#262D36",
    dark=True,
    variables={
        "footer-key-foreground": "#5FA8D3",
        "block-cursor-text-style": "bold",
    },
)
"""The default theme: dark blue-grey with amber accents."""

LIGHT = Theme(
    name="promptdeck-light",
    primary="#1F5F8B",
    secondary="#4A7FA7",
    accent="#B35C00",
    warning="#A66A00",
    error="#C62828",
    success="#2E7D32",
    foreground="#1E2329",
    background="#F4F5F7",
    surface="#E9ECEF",
    panel="#DDE2E7",
    dark=False,
    variables={
        "footer-key-foreground": "#1F5F8B",
    },
)
"""A light theme for bright terminals."""

HIGH_CONTRAST = Theme(
    name="promptdeck-high-contrast",
    primary="#FFFF00",
    secondary="#00FFFF",
    accent="#FF00FF",
    warning="#FFAA00",
    error="#FF3030",
    success="#00FF00",
    foreground="#FFFFFF",
    background="#000000",
    surface="#000000",
    panel="#1A1A1A",
    dark=True,
    luminosity_spread=0.3,
    text_alpha=1.0,
    variables={
        "footer-key-foreground": "#FFFF00",
        "block-cursor-background": "#FFFF00",
        "block-cursor-foreground": "#000000",
        "block-cursor-text-style": "bold",
        "border": "#FFFFFF",
        "border-blurred": "#AAAAAA",
    },
)
"""Pure black and white with saturated signal colours, for low vision and bright rooms."""

THEMES: tuple[Theme, ...] = (DARK, LIGHT, HIGH_CONTRAST)
"""Every theme promptdeck registers, in palette order."""

DEFAULT_THEME = DARK.name
"""The theme used when the settings file names none (or one that is not registered)."""

__all__ = ["DARK", "DEFAULT_THEME", "HIGH_CONTRAST", "LIGHT", "THEMES"]
