"""The JSON-lines channel's framing: whole lines out of whatever pieces the pipe delivers."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from pywebbench.core.jsonlines import ChannelClosed, LineBuffer, LineReader, decode, encode


def test_a_message_is_one_line_even_with_newlines_inside_it() -> None:
    line = encode({"note": "two\nlines", "n": 1})
    assert line.count(b"\n") == 1 and line.endswith(b"\n")
    assert decode(line) == {"note": "two\nlines", "n": 1}
    with pytest.raises(ValueError):
        decode(b"[1, 2]")  # a line that is JSON but not an object is no message


def test_a_half_line_waits_for_its_end_and_blank_lines_are_skipped() -> None:
    buffer = LineBuffer()
    whole = encode({"ready": {"port": 5432}})
    assert buffer.feed(whole[:7]) == [] and buffer.pending == whole[:7]
    assert buffer.feed(whole[7:] + b"\n" + b'{"id": 1') == [whole[:-1]]
    assert buffer.pending == b'{"id": 1'
    assert buffer.feed(b"}\n") == [b'{"id": 1}'] and buffer.pending == b""


def test_the_reader_waits_on_the_pipe_and_says_when_it_ends_mid_line() -> None:
    read, write = os.pipe()
    with os.fdopen(read, "rb", buffering=0) as pipe:
        reader = LineReader(pipe)
        assert reader.message(0.05) is None  # nothing yet: no answer, no error
        os.write(write, encode({"id": 1})[:5])
        assert reader.line(0.05) is None  # a half line is not a message
        os.write(write, encode({"id": 1})[5:] + encode({"id": 2}) + b'{"id": 3')
        assert reader.message(1.0) == {"id": 1} and reader.message(1.0) == {"id": 2}
        os.close(write)
        with pytest.raises(ChannelClosed, match="mid-line"):
            reader.line(1.0)


def test_lines_from_a_real_child_arrive_whole_however_it_flushes() -> None:
    script = ("import sys, time\n"
              "out = sys.stdout.buffer\n"
              "out.write(b'{\"ready\": {\"po'); out.flush(); time.sleep(0.05)\n"
              "out.write(b'rt\": 1}}\\n{\"id\": 7}\\n'); out.flush()\n")
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    assert child.stdout is not None
    reader = LineReader(child.stdout)
    assert reader.message(10.0) == {"ready": {"port": 1}} and reader.message(10.0) == {"id": 7}
    with pytest.raises(ChannelClosed):
        reader.message(10.0)
    assert child.wait(10) == 0
    child.stdout.close()
