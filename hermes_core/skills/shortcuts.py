"""One method per ``skill_manage`` action, for code that writes skills directly.

Why apart from :mod:`~hermes_core.skills.library`: each is a one-line
:class:`~hermes_core.skills.changes.SkillRequest` handed to ``write``; keeping them here leaves
the library's module to the rules of reading, writing and approving.
"""

from __future__ import annotations

from hermes_core.skills.changes import Result, SkillRequest

__all__ = ["SkillShortcuts"]


class SkillShortcuts:
    """``create``, ``edit``, ``patch``, ``write_file``, ``remove_file`` and ``delete`` as
    calls of ``write`` (mixed into :class:`~hermes_core.skills.library.SkillLibrary`)."""

    def write(self, request: SkillRequest, origin: str = "assistant_tool") -> Result:
        raise NotImplementedError

    def create(
        self,
        name: str,
        content: str,
        category: str | None = None,
        *,
        origin: str = "assistant_tool",
    ) -> Result:
        return self.write(SkillRequest("create", name, content=content, category=category), origin)

    def edit(self, name: str, content: str, *, origin: str = "assistant_tool") -> Result:
        return self.write(SkillRequest("edit", name, content=content), origin)

    def patch(
        self,
        name: str,
        old_string: str,
        new_string: str,
        file_path: str | None = None,
        *,
        origin: str = "assistant_tool",
    ) -> Result:
        request = SkillRequest(
            "patch", name, file_path=file_path, old_string=old_string, new_string=new_string
        )
        return self.write(request, origin)

    def write_file(
        self, name: str, file_path: str, file_content: str, *, origin: str = "assistant_tool"
    ) -> Result:
        request = SkillRequest("write_file", name, file_path=file_path, file_content=file_content)
        return self.write(request, origin)

    def remove_file(self, name: str, file_path: str, *, origin: str = "assistant_tool") -> Result:
        return self.write(SkillRequest("remove_file", name, file_path=file_path), origin)

    def delete(self, name: str, *, origin: str = "assistant_tool") -> Result:
        return self.write(SkillRequest("delete", name), origin)
