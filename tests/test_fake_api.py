"""The fake Anthropic API and the CLI helper: the anthropic SDK (streaming and not) and the real CLI talk to it."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request

import anthropic
import pytest

from support.claude_cli import leftover_processes, run_claude
from support.fake_api import (
    FakeAPI,
    all_of,
    any_user_contains,
    error,  # noqa: F401
    fake_api,  # noqa: F401  (a fixture)
    is_main,
    last_user_contains,  # noqa: F401
    system_contains,
    text,
    tool_result_contains,  # noqa: F401
    tool_result_for,  # noqa: F401
    tool_use,
)


def client(api: FakeAPI, retries: int = 0) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=api.url, api_key="sk-fake", max_retries=retries, timeout=10)


def test_non_streaming_text_and_tool_use(fake_api):
    fake_api.rule(
        any_user_contains("weather"), [tool_use("get_weather", {"city": "Paris"}, id="toolu_1"), text("Sunny.")]
    )
    c = client(fake_api)
    msgs = [{"role": "user", "content": "weather in Paris?"}]
    r1 = c.messages.create(model="m", max_tokens=100, messages=msgs)
    assert r1.stop_reason == "tool_use"
    assert r1.content[0].type == "tool_use" and r1.content[0].input == {"city": "Paris"}
    msgs += [
        {"role": "assistant", "content": [b.model_dump() for b in r1.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "22C"}]},
    ]
    r2 = c.messages.create(model="m", max_tokens=100, messages=msgs)
    assert r2.content[0].text == "Sunny." and r2.stop_reason == "end_turn"
    # the list is consumed: a third request falls to the default
    r3 = c.messages.create(model="m", max_tokens=100, messages=[{"role": "user", "content": "weather?"}])
    assert r3.content[0].text.startswith("OK")
    res = fake_api.tool_results("get_weather")
    assert [(r.tool_use_id, r.text, r.input) for r in res] == [("toolu_1", "22C", {"city": "Paris"})]


def test_streaming_with_system_role_messages_and_mixed_blocks(fake_api):
    fake_api.rule(
        system_contains("You are a recorder"),
        text("noted ") + tool_use("write", {"path": "a.md", "content": "x" * 300}),
    )
    c = client(fake_api)
    with c.messages.stream(
        model="m", max_tokens=100, system="You are a recorder.", messages=[{"role": "user", "content": "hi"}]
    ) as s:
        final = s.get_final_message()
    assert [b.type for b in final.content] == ["text", "tool_use"]
    assert final.content[1].input == {"path": "a.md", "content": "x" * 300}  # reassembled from deltas
    assert final.stop_reason == "tool_use" and final.usage.output_tokens > 0
    # role "system" inside messages is accepted (the real CLI sends these) and matched as system text
    raw = json.dumps(
        {
            "model": "m",
            "max_tokens": 5,
            "stream": False,
            "messages": [{"role": "system", "content": "You are a recorder"}, {"role": "user", "content": "x"}],
        }
    ).encode()
    with urllib.request.urlopen(
        urllib.request.Request(f"{fake_api.url}/v1/messages?beta=true", raw, {"content-type": "application/json"})
    ) as resp:
        body = json.loads(resp.read())
    assert body["content"][0]["text"] == "noted "
    assert fake_api.requests[-1].path == "/v1/messages?beta=true"


def test_errors_for_n_calls_then_success(fake_api):
    fake_api.fail(529, times=2)
    c = client(fake_api)
    for _ in range(2):
        with pytest.raises(anthropic.APIStatusError) as exc:
            c.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}])
        assert exc.value.status_code == 529
    ok = c.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}])
    assert ok.content[0].text.startswith("OK")
    # the SDK's own retries go through the same rules
    fake_api.fail(500, times=1)
    ok = client(fake_api, retries=2).messages.create(
        model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}]
    )
    assert ok.content[0].text.startswith("OK")
    assert len(fake_api.requests) == 5


def test_always_failing_and_bad_request(fake_api):
    fake_api.fail(500, times=None, retry=False)
    with pytest.raises(anthropic.InternalServerError):
        client(fake_api, retries=3).messages.create(
            model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}]
        )
    assert len(fake_api.requests) == 1  # x-should-retry: false stops the SDK from retrying
    req = urllib.request.Request(f"{fake_api.url}/v1/messages", b"{}", {"content-type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as exc:
        urllib.request.urlopen(req)
    assert exc.value.code == 400


def test_hang_times_out_client_and_stop_releases_it():
    api = FakeAPI().start()
    api.hang(60)
    c = anthropic.Anthropic(base_url=api.url, api_key="k", max_retries=0, timeout=0.5)
    t0 = time.monotonic()
    with pytest.raises(anthropic.APITimeoutError):
        c.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}])
    assert time.monotonic() - t0 < 5
    t0 = time.monotonic()
    api.stop()  # must not wait for the 60 s hang
    assert time.monotonic() - t0 < 5


def test_callable_reply_headers_and_wait_for(fake_api):
    fake_api.rule(all_of(is_main, last_user_contains("echo")), lambda req: text(req.last_user_text.upper()))
    c = client(fake_api)
    r = c.messages.create(
        model="m",
        max_tokens=5,
        messages=[{"role": "user", "content": "echo me"}],
        extra_headers={"x-claude-code-agent-id": "agent-7"},
    )
    assert r.content[0].text.startswith("OK")  # subagent request: is_main fails
    r = c.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "echo me"}])
    assert r.content[0].text == "ECHO ME"
    assert fake_api.requests[0].agent_id == "agent-7" and fake_api.requests[1].agent_id is None
    threading.Timer(
        0.2, lambda: c.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "late"}])
    ).start()
    assert fake_api.wait_for(last_user_contains("late"), timeout=5).last_user_text == "late"


def test_broken_rule_is_a_500_not_a_hang(fake_api):
    fake_api.rule(lambda req: True, lambda req: 1 / 0)
    with pytest.raises(anthropic.InternalServerError, match="ZeroDivisionError"):
        client(fake_api).messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}])


@pytest.mark.e2e
def test_real_cli_talks_to_fake_api(fake_api, tmp_path):
    """The bundled CLI runs offline against the fake API: tool_use round trip through a built-in tool."""
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "notes.txt").write_text("the secret word is kumquat\n")
    fake_api.script(
        tool_use("Read", {"file_path": str(tmp_path / "proj" / "notes.txt")}), text("It is kumquat."), when=is_main
    )
    run = run_claude(
        "what is the secret word?",
        api=fake_api,
        home=tmp_path / "home",
        cwd=tmp_path / "proj",
        plugin_dir=None,
        allowed_tools=["Read"],
    )
    assert run.rc == 0, run
    assert run.result == "It is kumquat." and run.session_id
    read = fake_api.tool_results("Read")
    assert read and "kumquat" in read[0].text
    main = [r for r in fake_api.messages_requests() if r.agent_id is None]
    assert main[0].session_id == run.session_id
    assert any(m.get("role") == "system" for m in main[0].messages)
    assert not leftover_processes(run.run_id)
