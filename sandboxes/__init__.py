"""sandboxes subpackage."""
