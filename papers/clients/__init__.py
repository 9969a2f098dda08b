"""HTTP clients of the outside services (arXiv, GitHub, PDF hosts). No database access here:
services call these and decide what to store."""
