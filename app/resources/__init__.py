"""The tray's icons, shipped as package data (``icons/``); read through ``app.ui.resources``."""
