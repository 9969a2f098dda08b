"""The papers app (see DESIGN.md: layout)."""
