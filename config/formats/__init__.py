"""The site's date formats (``FORMAT_MODULE_PATH``), one module per language."""
