"""Who may do what, for the API and the pages alike.

Anonymous users read everything public; editors (members of the "editors" group, or anyone with
the `ontology.change_fact` permission) verify, reject and edit facts; superusers do everything.
A user's own digest subscription is found by their account's email address (papers.api), so no
one can address another's.
"""
from __future__ import annotations

from typing import Any

from rest_framework.permissions import SAFE_METHODS, BasePermission

EDITORS_GROUP = "editors"


def is_editor(user: Any) -> bool:
    """True for active superusers, members of the editors group, and holders of ontology.change_fact."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return False
    if user.is_superuser:
        return True
    cached = getattr(user, "_infrawiki_is_editor", None)
    if cached is None:
        cached = user.groups.filter(name=EDITORS_GROUP).exists() or user.has_perm("ontology.change_fact")
        user._infrawiki_is_editor = cached
    return cached


class IsEditor(BasePermission):
    """Fact review actions (verify, reject, edit)."""

    message = "Only editors can review facts. Ask an admin to add you to the 'editors' group."

    def has_permission(self, request, view) -> bool:
        return is_editor(request.user)


class IsEditorOrReadOnly(IsEditor):
    """Reads for everyone; writes for editors."""

    def has_permission(self, request, view) -> bool:
        return request.method in SAFE_METHODS or is_editor(request.user)

