"""`{% shown_quote fact %}`: a fact's quote as pages show it (ontology.selectors.shown_quote), never table or figure soup."""
from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from ontology import selectors as ontology_selectors

register = template.Library()


@register.simple_tag
def shown_quote(fact) -> SafeString:
    """The quote in display form; a quote with no readable form says where to read it instead."""
    shown = ontology_selectors.shown_quote(fact.quote)
    if shown:
        return format_html("{}", shown)
    return format_html('<span class="muted">Table or figure text: see p.{} of the PDF.</span>', fact.page or "?")
