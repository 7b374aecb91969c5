"""The Textual console of recall-admin: screens and widgets over the recall_admin services."""
