"""The console's screens and views: one file each."""
