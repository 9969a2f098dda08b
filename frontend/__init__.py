"""The frontend app (see DESIGN.md: layout)."""
