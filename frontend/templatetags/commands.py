"""`{{ command|unbroken_words }}`: a shell command shown in a <pre> wraps between its words only."""
from django import template
from django.utils.html import format_html_join
from django.utils.safestring import SafeString

register = template.Library()


@register.filter
def unbroken_words(command: str) -> SafeString:
    """Each space-separated word in a no-wrap span: a long command still wraps on a phone, but never
    after the first hyphen of a flag ("-" / "-max-num-seqs"), which reads as a different flag. The
    spans add no text, so copying the element's text gives the command unchanged."""
    return format_html_join(" ", '<span class="nowrap">{}</span>', ((word,) for word in str(command).split(" ")))
