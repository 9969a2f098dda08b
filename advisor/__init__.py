"""The advisor app (see DESIGN.md: layout)."""
