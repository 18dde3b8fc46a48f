"""The rules ``humanoid view`` applies to what a page sends, case by case (no server: the
handshake requests are websockets' own ``Request`` objects, the files real ones)."""

from __future__ import annotations

import math

import pytest
from websockets.datastructures import Headers
from websockets.http11 import Request

from humanoid_core.loop import CommandRejectedError
from humanoid_description import urdf_xml
from humanoid_tools.view import JointTargets, KeyframeFolder, PageAccess, RefusalLog

TOKEN = "t0k3n"


def access() -> PageAccess:
    page = PageAccess(["127.0.0.1", "localhost"], token=TOKEN)
    page.port = 8080
    return page


def websocket(path: str, *origins: str) -> Request:
    headers = Headers([("Upgrade", "websocket"), *(("Origin", origin) for origin in origins)])
    return Request(path, headers)


@pytest.mark.parametrize(("request_", "refused"), [
    (websocket(f"/{TOKEN}", "http://127.0.0.1:8080"), None),
    (websocket(f"/{TOKEN}?x=1", "http://LOCALHOST:8080"), None),  # origins are case-insensitive
    (websocket(f"/{TOKEN}", "http://evil.example.com"), "opened by a page of 'http://evil.example.com'"),
    (websocket(f"/{TOKEN}", "http://127.0.0.1:8081"), "opened by a page of"),  # another port, another origin
    (websocket(f"/{TOKEN}", "https://127.0.0.1:8080"), "opened by a page of"),
    (websocket(f"/{TOKEN}"), "without exactly one Origin"),
    (websocket(f"/{TOKEN}", "http://127.0.0.1:8080", "http://evil.example.com"), "without exactly one Origin"),
    (websocket("/", "http://127.0.0.1:8080"), "without this run's token"),
    (websocket(f"/{TOKEN}x", "http://127.0.0.1:8080"), "without this run's token"),
    (websocket(f"/{TOKEN}/more", "http://127.0.0.1:8080"), "without this run's token"),
    (Request("/", Headers()), "a page request without this run's token"),
    (Request(f"/{TOKEN}x/", Headers()), "a page request without this run's token"),
    (Request(f"/{TOKEN}/", Headers()), None),
], ids=["page", "localhost", "foreign origin", "other port", "https", "no origin", "two origins", "no token",
        "longer token", "token then more", "page without token", "page, longer token", "page with token"])
def test_the_page_access_rule(request_, refused):
    refusal, _ = access().check(request_)
    assert (refusal is None) if refused is None else (refused in refusal), refusal


def test_a_page_under_the_token_is_viser_s_page_without_it():
    assert access().check(Request(f"/{TOKEN}/", Headers()))[1].path == "/"
    assert access().check(Request(f"/{TOKEN}/index.html?a", Headers()))[1].path == "/index.html"


@pytest.mark.parametrize("degrees", [math.nan, math.inf, -math.inf, 1e9, -1e9, 2.0, "30", None, True])
def test_a_slider_value_outside_the_limits_or_not_a_number_is_refused(degrees):
    with pytest.raises(CommandRejectedError):
        JointTargets(urdf_xml("hoap2")).radians("larm_joint4", degrees)  # limits [-115, 1] deg


def test_a_slider_value_within_the_limits_is_the_joint_target():
    targets = JointTargets(urdf_xml("hoap2"))
    assert targets.radians("larm_joint4", -30) == pytest.approx(math.radians(-30.0))
    with pytest.raises(CommandRejectedError, match="unknown joint"):
        targets.radians("tail_joint", 0.0)


@pytest.mark.parametrize(("name", "refused"), [
    ("/etc/passwd.yaml", "is not a file name"), ("../poses.yaml", "is not a file name"),
    ("sub/poses.yaml", "is not a file name"), ("..", "is not a file name"), ("", "give the keyframe file's name"),
    ("poses.txt", "not a keyframe file name"), (".yaml", "not a keyframe file name"),
    ("out.yaml", "symbolic link leading out"), ("folder.yaml", "not a regular file"),
])
def test_a_keyframe_file_is_a_yaml_file_of_its_folder(tmp_path, name, refused):
    folder = tmp_path / "keyframes"
    folder.mkdir()
    (folder / "out.yaml").symlink_to(tmp_path / "elsewhere.yaml")
    (folder / "folder.yaml").mkdir()
    with pytest.raises(ValueError, match=refused):
        KeyframeFolder.at(folder).file(name)


def test_a_keyframe_file_of_the_folder_is_accepted(tmp_path):
    (tmp_path / "inside.yaml").symlink_to(tmp_path / "poses.yaml")
    folder = KeyframeFolder.at(tmp_path)
    assert folder.file("poses.yaml") == tmp_path.resolve() / "poses.yaml"
    assert folder.file("inside.yaml") == tmp_path.resolve() / "poses.yaml"  # a link within the folder
    assert folder.file("Moves.YML") == tmp_path.resolve() / "Moves.YML"



def test_each_refusal_is_logged_once_and_a_flood_of_them_stops_being_logged(capsys):
    log = RefusalLog(limit=20)
    for _ in range(2):
        log.report("a websocket opened by a page of 'http://evil.example.com'")
    assert capsys.readouterr().err.count("evil.example.com") == 1
    for n in range(40):
        log.report(f"a websocket opened by a page of 'http://evil{n}.example.com'")
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 19 and lines[-1].endswith("(further refusals are not logged)"), lines
