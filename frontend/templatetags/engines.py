"""`{{ engine_id|engine_name }}`: pages show an engine as people write it ("vLLM"), not by its catalog id."""
from django import template

from advisor.selectors import engine_label

register = template.Library()


@register.filter
def engine_name(engine: str) -> str:
    return engine_label(engine) if isinstance(engine, str) else engine
