"""The ontology app (see DESIGN.md: layout)."""
