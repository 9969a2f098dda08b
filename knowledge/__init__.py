"""Knowledge files: the bundled starter pack and the export/import between instances (one format)."""
