"""The console's screens: the main screen and its dialogs (forms, confirmations, help)."""
