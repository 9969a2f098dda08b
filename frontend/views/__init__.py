"""Page views of the browser UI, one module per page family; each is thin: read through selectors,
write through services, render a template (extracted text is autoescaped everywhere)."""
