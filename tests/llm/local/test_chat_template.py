"""ChatTemplate: a GGUF's Jinja2 chat template rendered to prompt text, with ChatML when there is none."""

from __future__ import annotations

import pytest

from voxcall.llm import Message
from voxcall.llm.local.chat_template import ChatTemplate

CONVERSATION = [Message(role="system", text="Be brief."), Message(role="user", text="Hi"),
                Message(role="assistant", text="Hello."), Message(role="user", text="Bye")]


def test_chatml_when_the_model_has_no_template() -> None:
    assert ChatTemplate(None).render(CONVERSATION) == (
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
        "<|im_start|>assistant\nHello.<|im_end|>\n<|im_start|>user\nBye<|im_end|>\n<|im_start|>assistant\n")
    assert not ChatTemplate(None).render(CONVERSATION, add_generation_prompt=False).endswith("assistant\n")


def test_a_models_template_with_special_tokens() -> None:
    source = ("{{ bos_token }}{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }}{{ eos_token }}"
              "{% endfor %}{% if add_generation_prompt %}[assistant] {% endif %}")
    text = ChatTemplate(source, bos_token="<s>", eos_token="</s>").render(CONVERSATION[1:3])
    assert text == "<s>[user] Hi</s>[assistant] Hello.</s>[assistant] "


def test_a_template_that_rejects_the_conversation() -> None:
    source = ("{% if messages[0]['role'] == 'system' %}{{ raise_exception('no system role') }}{% endif %}"
              "{% for m in messages %}{{ m['content'] }}{% endfor %}")
    with pytest.raises(ValueError, match="no system role"):
        ChatTemplate(source).render(CONVERSATION)
    assert ChatTemplate(source).render(CONVERSATION[1:]) == "HiHello.Bye"


def test_templates_run_sandboxed() -> None:
    with pytest.raises(ValueError):
        ChatTemplate("{{ messages.__class__.__mro__[1].__subclasses__() }}").render(CONVERSATION)
