"""``pull``'s login: TLS (``--ssl-mode`` and co.) and the password, which never goes on the wire
readable. Against a fake server of our own on 127.0.0.1 (``fixtures/fake_login.py``: it records
every byte it receives, before TLS and inside it) and, marked ``server``, against the lab's real
MariaDB 10.11 with certificates made here."""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from binlogkit.pull.auth import (Login, PasswordRefused, SslMode, TlsError, TlsOptions, caching_sha2_scramble,
                                 native_scramble, rsa_encrypt_password)
from binlogkit.pull.conn import Connection
from binlogkit.pull.protocol import PullError, native_password_scramble
from fixtures.fake_login import FakeLoginServer, Script, make_certs, server_context

ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "s3cret-Pässwort"


def _encodings(pw: str) -> list[bytes]:
    """The password in every form a plugin or a careless client could put it on the wire."""
    raw = pw.encode()
    out = [raw, pw.encode("utf-16-le"), pw.encode("utf-16-be"), pw.encode("latin-1"), raw.hex().encode(),
           raw.hex().upper().encode(), base64.b64encode(raw), hashlib.sha1(raw).digest(), hashlib.sha256(raw).digest()]
    return out


def _leaks(blob: bytes | bytearray, pw: str = PASSWORD) -> list[bytes]:
    return [form for form in _encodings(pw) if bytes(form) in bytes(blob)]


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return make_certs(tmp_path_factory.mktemp("certs"))


@pytest.fixture(scope="module")
def rsa_key():
    from cryptography.hazmat.primitives.asymmetric import rsa

    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _cli_pull(port: int, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    pw = tmp_path / "pw"
    pw.write_text(PASSWORD + "\n")
    return subprocess.run([sys.executable, "-m", "binlogkit.cli", "pull", "--host", "127.0.0.1", "--port", str(port),
                           "--user", "repl", "--password-file", str(pw), "--server-id", "77",
                           "--dir", str(tmp_path / "out"), *extra],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)


def _login(port: int, **tls) -> Connection:
    return Connection("127.0.0.1", port, "repl", PASSWORD, connect_timeout=5, tls=TlsOptions(**tls))


# -- refused: the password would be readable ---------------------------------------------------
@pytest.mark.parametrize("script, what", [
    (Script(switch="mysql_clear_password"), "clear text (mysql_clear_password)"),
    (Script(switch="dialog"), "clear text (dialog)"),
    (Script(plugin="caching_sha2_password", full_auth=True), "caching_sha2_password full authentication"),
    (Script(switch="caching_sha2_password", full_auth=True), "caching_sha2_password full authentication"),
    (Script(switch="sha256_password"), "sha256_password full authentication"),
])
def test_password_never_sent_readable_without_tls_exit_2(script, what, tmp_path):
    with FakeLoginServer(script) as srv:
        r = _cli_pull(srv.port, tmp_path)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "refused" in lines[0] and what in lines[0], r.stderr
    assert "Traceback" not in r.stderr
    seen = srv.seen[0]
    assert not seen.tls and seen.outcome.startswith("closed")    # the request was not answered
    assert seen.wire and _leaks(seen.wire) == []
    assert not (tmp_path / "out").exists() or not os.listdir(tmp_path / "out")


def test_the_leak_check_can_fail(tmp_path):
    """The same fake server and search find the password when a client does send it (PyMySQL
    alone, which answers mysql_clear_password on a plain connection; in latin-1): the check is not
    blind."""
    import pymysql

    with FakeLoginServer(Script(switch="mysql_clear_password")) as srv:
        pymysql.connect(host="127.0.0.1", port=srv.port, user="repl", password=PASSWORD, connect_timeout=5).close()
    assert _leaks(srv.seen[0].wire) == [PASSWORD.encode("latin-1")]


def test_required_tls_against_a_server_without_refuses_before_any_answer(tmp_path):
    for mode in ("REQUIRED", "VERIFY_CA", "VERIFY_IDENTITY"):
        with FakeLoginServer(Script()) as srv:
            r = _cli_pull(srv.port, tmp_path, "--ssl-mode", mode)
        assert r.returncode == 2, r.stderr
        assert r.stderr.strip() == f"binlogkit: error: 127.0.0.1:{srv.port} does not offer TLS and --ssl-mode is {mode}: refused"
        assert bytes(srv.seen[0].wire) == b""      # not even the user name went out


def test_defaults_file_ssl_mode(tmp_path):
    cnf = tmp_path / "my.cnf"
    cnf.write_text("[client]\nuser=repl\n[binlogkit]\nssl-mode=REQUIRED\n")
    with FakeLoginServer(Script()) as srv:
        r = _cli_pull(srv.port, tmp_path, "--defaults-file", str(cnf))
    assert r.returncode == 2 and "does not offer TLS and --ssl-mode is REQUIRED" in r.stderr, r.stderr
    cnf.write_text("[client]\nssl-mode=SOMETIMES\n")
    r = _cli_pull(1, tmp_path, "--defaults-file", str(cnf))
    assert r.returncode == 2 and r.stderr.strip().startswith("binlogkit: error: ssl-mode must be one of DISABLED"), r.stderr


# -- allowed: TLS, or the RSA key ----------------------------------------------------------------
@pytest.mark.parametrize("switch", ["mysql_clear_password", "dialog"])
def test_clear_text_plugins_answered_inside_tls_only(switch, certs):
    with FakeLoginServer(Script(switch=switch), tls=server_context(certs)) as srv:
        c = _login(srv.port, mode=SslMode.VERIFY_IDENTITY, ca=str(certs["ca"]))
        assert c.tls
        c.close()
    seen = srv.seen[0]
    assert seen.tls and seen.outcome == "ok"
    assert len(seen.wire) == 4 + 32           # in plain TCP only the SSLRequest
    assert _leaks(seen.wire) == []
    assert seen.answers[-1] == PASSWORD.encode() + b"\0"   # the password went, inside TLS


def test_caching_sha2_full_auth_over_tls_and_with_the_rsa_key(certs, rsa_key, tmp_path):
    sha2 = Script(plugin="caching_sha2_password", full_auth=True)
    with FakeLoginServer(sha2, tls=server_context(certs)) as srv:
        _login(srv.port, mode=SslMode.REQUIRED).close()
    assert srv.seen[0].tls and srv.seen[0].answers[-1] == PASSWORD.encode() + b"\0"
    assert _leaks(srv.seen[0].wire) == []
    # no TLS: the key asked for (--get-server-public-key), the password RSA-OAEP encrypted to it
    with FakeLoginServer(sha2, rsa_key=rsa_key) as srv:
        _login(srv.port, get_server_public_key=True).close()
    seen = srv.seen[0]
    assert not seen.tls and seen.answers[-2] == b"\x02" and seen.decrypted == [PASSWORD.encode() + b"\0"]
    assert _leaks(seen.wire) == []
    # a pinned key (--server-public-key): nothing asked, the password encrypted at once
    from cryptography.hazmat.primitives import serialization

    pem = tmp_path / "server-public.pem"
    pem.write_bytes(rsa_key.public_key().public_bytes(serialization.Encoding.PEM,
                                                      serialization.PublicFormat.SubjectPublicKeyInfo))
    with FakeLoginServer(Script(switch="sha256_password"), rsa_key=rsa_key) as srv:
        _login(srv.port, server_public_key=str(pem)).close()
    assert b"\x01" not in srv.seen[0].answers and _leaks(srv.seen[0].wire) == []


def test_native_password_as_before_and_preferred_takes_tls_when_offered(certs):
    with FakeLoginServer(Script()) as srv:
        c = _login(srv.port)
        assert not c.tls
        c.close()
    assert not srv.seen[0].tls and _leaks(srv.seen[0].wire) == []
    with FakeLoginServer(Script(), tls=server_context(certs)) as srv:
        c = _login(srv.port)   # PREFERRED, no CA: TLS, certificate not checked (as the mysql clients)
        assert c.tls
        c.close()
    with FakeLoginServer(Script(), tls=server_context(certs)) as srv:
        c = _login(srv.port, mode=SslMode.DISABLED)
        assert not c.tls
        c.close()


def test_certificate_checks_fail_closed(certs, tmp_path):
    other = make_certs(tmp_path / "other", name="another CA")
    elsewhere = make_certs(tmp_path / "elsewhere", hosts=("db.example.org",))
    cases = [(certs, dict(mode=SslMode.VERIFY_CA, ca=str(other["ca"])), "unable to get local issuer certificate"),
             (elsewhere, dict(mode=SslMode.VERIFY_IDENTITY, ca=str(elsewhere["ca"])), "IP address mismatch")]
    for server_certs, opts, why in cases:
        with FakeLoginServer(Script(switch="mysql_clear_password"), tls=server_context(server_certs)) as srv:
            with pytest.raises(TlsError, match=why):
                _login(srv.port, **opts)
        assert srv.seen[0].answers == [] and _leaks(srv.seen[0].wire) == []
    # the right CA without the host check passes where the host name is wrong
    with FakeLoginServer(Script(), tls=server_context(elsewhere)) as srv:
        _login(srv.port, mode=SslMode.VERIFY_CA, ca=str(elsewhere["ca"])).close()


def test_a_server_closing_in_the_tls_handshake_is_a_lost_connection_not_a_refusal(certs):
    """A server that closes the connection in the middle of the TLS handshake (a primary
    shutting down or starting up as pull reconnects) is a connection lost, retried with the
    backoff, not a TLS refusal (exit 2); a certificate that does not check out still is."""
    from binlogkit.pull.conn import ConnectionLost

    with FakeLoginServer(Script(close_at_tls=True), tls=server_context(certs)) as srv:
        with pytest.raises(ConnectionLost, match="TLS handshake"):
            _login(srv.port)


# -- the plugins' answers, pure -------------------------------------------------------------------
@settings(max_examples=50, deadline=None)
@given(st.text(min_size=1, max_size=40), st.binary(min_size=20, max_size=20))
def test_scrambles_check_out_as_the_server_checks_them(pw, nonce):
    raw = pw.encode()
    # caching_sha2: the server keeps SHA256(SHA256(pw)); XOR with SHA256(that + nonce) gives SHA256(pw)
    stored = hashlib.sha256(hashlib.sha256(raw).digest()).digest()
    got = caching_sha2_scramble(raw, nonce)
    mask = hashlib.sha256(stored + nonce).digest()
    assert hashlib.sha256(bytes(a ^ b for a, b in zip(got, mask))).digest() == stored
    # native: the server keeps SHA1(SHA1(pw))
    stored1 = hashlib.sha1(hashlib.sha1(raw).digest()).digest()
    got1 = native_scramble(raw, nonce)
    assert got1 == native_password_scramble(pw, nonce)
    assert hashlib.sha1(bytes(a ^ b for a, b in zip(got1, hashlib.sha1(nonce + stored1).digest()))).digest() == stored1


def test_login_refusals():
    plain = Login(b"pw", tls=False, where="h:1")
    plain.first("mysql_native_password", b"n" * 20)
    with pytest.raises(PasswordRefused, match="pre-4.1"):
        plain.reply(b"\xfe")
    with pytest.raises(PasswordRefused, match="does not speak"):
        plain.reply(b"\xfeauth_gssapi_client\0xyz")
    with pytest.raises(PasswordRefused, match="not for the password"):
        Login(b"pw", tls=True, where="h:1").reply(b"\xfedialog\0\x03Your name: ")
    tls = Login(b"pw", tls=True, where="h:1")
    tls.first("mysql_native_password", b"n" * 20)
    tls.reply(b"\xfemysql_native_password\0" + b"m" * 20 + b"\0")
    tls.reply(b"\xfemysql_native_password\0" + b"m" * 20 + b"\0")
    with pytest.raises(PullError, match="switched authentication plugins 3 times"):
        tls.reply(b"\xfemysql_native_password\0" + b"m" * 20 + b"\0")
    # an empty password is the plugins' empty answer, also without TLS: nothing to read
    empty = Login(b"", tls=False, where="h:1")
    assert empty.reply(b"\xfemysql_clear_password\0") == b"\0"
    with pytest.raises(PullError, match="not a PEM RSA key"):
        rsa_encrypt_password(b"pw", b"n" * 20, b"-----BEGIN PUBLIC KEY-----\nnonsense\n")


def test_tls_options_refuse_unusable_files(tmp_path):
    from binlogkit.pull.auth import ssl_context

    bad = tmp_path / "ca.pem"
    bad.write_text("not a certificate\n")
    with pytest.raises(TlsError, match="cannot use the TLS files"):
        ssl_context(TlsOptions(mode=SslMode.VERIFY_CA, ca=str(bad)))
    assert ssl_context(TlsOptions(mode=SslMode.DISABLED)) is None


# -- the lab's real MariaDB 10.11 with TLS ----------------------------------------------------------
@pytest.fixture(scope="module")
def tls_primary(tmp_path_factory, certs):
    """A primary with ssl_cert/ssl_key/ssl_ca (the certificates made above), two rotations and a
    transaction holding a 17 MB event (two protocol packets, so two TLS-read packet joins), and a
    user ``tls_only`` created REQUIRE SSL with a non-ASCII password."""
    from fixtures.lab import workload
    from fixtures.lab.pull_lab import big_event_trx, settle, start_primary
    from fixtures.lab.topology import Lab

    base = tmp_path_factory.mktemp("tls-primary")
    with Lab(base / "lab") as lab:
        p = start_primary(lab, ssl_cert=certs["server"], ssl_key=certs["server_key"], ssl_ca=certs["ca"])
        p.execute("SET sql_log_bin=0",
                  f"CREATE USER 'tls_only'@'127.0.0.1' IDENTIFIED BY '{PASSWORD}' REQUIRE SSL",
                  "GRANT REPLICATION SLAVE ON *.* TO 'tls_only'@'127.0.0.1'")
        workload.small(p, 100)
        p.execute("FLUSH BINARY LOGS")
        big_event_trx(p, 1, more_mb=1)
        workload.small(p, 50, start=100)
        p.execute("FLUSH BINARY LOGS")
        workload.small(p, 20, start=200)
        settle(p)
        yield p


def _lab_pull(p, d: Path, user: str, *extra: str) -> subprocess.CompletedProcess:
    from fixtures.lab.topology import REPL_PASSWORD, REPL_USER

    pw = d.parent / f"{user}.pw"
    pw.write_text((REPL_PASSWORD if user == REPL_USER else PASSWORD) + "\n")
    return subprocess.run([sys.executable, "-m", "binlogkit.cli", "pull", "--host", "127.0.0.1", "--port", str(p.port),
                           "--user", user, "--password-file", str(pw), "--server-id", "4343", "--dir", str(d),
                           "--until-end", *extra], capture_output=True, text=True, timeout=300, cwd=ROOT)


@pytest.mark.server
def test_verify_identity_pull_is_byte_identical(tls_primary, certs, tmp_path):
    from fixtures.lab.pull_lab import compare_files, primary_binlogs

    d = tmp_path / "pulled"
    r = _lab_pull(tls_primary, d, "repl", "--ssl-mode", "VERIFY_IDENTITY", "--ssl-ca", str(certs["ca"]))
    assert r.returncode == 0, r.stderr
    assert " over TLSv1.3 (VERIFY_IDENTITY) at mariadb-bin.000001:4" in r.stderr.splitlines()[0]
    names = primary_binlogs(tls_primary)
    assert len(names) >= 3
    assert compare_files(tls_primary, d, names) == {n: "identical" for n in names}
    # a client certificate is presented when given (the server accepts it: same CA)
    d2 = tmp_path / "with-cert"
    r = _lab_pull(tls_primary, d2, "tls_only", "--ssl-mode", "VERIFY_CA", "--ssl-ca", str(certs["ca"]),
                  "--ssl-cert", str(certs["client"]), "--ssl-key", str(certs["client_key"]))
    assert r.returncode == 0, r.stderr
    assert compare_files(tls_primary, d2, names) == {n: "identical" for n in names}


@pytest.mark.server
def test_require_ssl_user_only_over_tls(tls_primary, certs, tmp_path):
    from fixtures.lab.pull_lab import compare_files, primary_binlogs

    r = _lab_pull(tls_primary, tmp_path / "plain", "tls_only", "--ssl-mode", "DISABLED")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "refused the login" in r.stderr and "tls_only" in r.stderr
    # the default (PREFERRED) takes the TLS the server offers; the password is non-ASCII (UTF-8)
    r = _lab_pull(tls_primary, tmp_path / "tls", "tls_only")
    assert r.returncode == 0, r.stderr
    assert " over TLSv1.3 (PREFERRED) at " in r.stderr.splitlines()[0]
    names = primary_binlogs(tls_primary)
    assert compare_files(tls_primary, tmp_path / "tls", names) == {n: "identical" for n in names}


@pytest.mark.server
def test_wrong_ca_fails_closed_against_the_real_server(tls_primary, tmp_path):
    other = make_certs(tmp_path / "other", name="another CA")
    d = tmp_path / "pulled"
    r = _lab_pull(tls_primary, d, "repl", "--ssl-mode", "VERIFY_CA", "--ssl-ca", str(other["ca"]))
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"binlogkit: error: 127.0.0.1:{tls_primary.port}: the server's certificate does not check out (")
    assert lines[0].endswith("; --ssl-mode VERIFY_CA): refused") and "certificate" in lines[0].split("(")[1]
    assert not d.exists() or not [n for n in os.listdir(d) if n.startswith("mariadb-bin")]


# -- MySQL 9.7: caching_sha2_password's full authentication over TLS and with the RSA key --------
@pytest.fixture(scope="module")
def mysql97(tmp_path_factory):
    """A MySQL 9.7 primary of the lab (its sid chroot; the certificates and RSA key pair that
    ``mysqld --initialize`` makes in the datadir), the replication account caching_sha2_password,
    two rotations and a 17 MB row. Skipped when the lab has no such kind or the chroot is absent."""
    try:
        from fixtures.lab.kinds import kind
    except ImportError:
        pytest.skip("this lab has no server kinds (fixtures/lab/kinds.py)")
    k = kind("mysql-9.7")
    if not k.available():
        pytest.skip("no mysql-9.7 chroot: scripts/lab-chroot.sh mysql-9.7")
    from fixtures.lab.topology import Lab, grant_replication

    with Lab(tmp_path_factory.mktemp("mysql97") / "lab", kind=k) as lab:
        p = lab.server("primary", 1, max_binlog_size=1 << 20).start()
        grant_replication(p)
        p.execute("CREATE DATABASE lab", "CREATE TABLE lab.t (id INT PRIMARY KEY, v LONGTEXT)",
                  *(f"INSERT INTO lab.t VALUES ({i}, REPEAT('x', 5000))" for i in range(300)),
                  "FLUSH BINARY LOGS", "INSERT INTO lab.t VALUES (100000, REPEAT('y', 17 << 20))",
                  *(f"UPDATE lab.t SET v = 'z' WHERE id = {i}" for i in range(50)))
        yield p


def _same_files(p, d: Path) -> dict:
    names = [r["Log_name"] for r in p.query("SHOW BINARY LOGS")]
    return {n: subprocess.run(["cmp", str(p.datadir / n), str(d / n)], capture_output=True).returncode == 0
            for n in names}


@pytest.mark.server
def test_mysql97_caching_sha2_full_auth_over_tls_and_rsa(mysql97, tmp_path):
    p = mysql97
    ca, pub = p.datadir / "ca.pem", p.datadir / "public_key.pem"
    runs = [("tls", ("--ssl-mode", "VERIFY_CA", "--ssl-ca", str(ca)), 0),
            ("refused", ("--ssl-mode", "DISABLED"), 2),
            ("asked", ("--ssl-mode", "DISABLED", "--get-server-public-key"), 0),
            ("pinned", ("--ssl-mode", "DISABLED", "--server-public-key", str(pub)), 0),
            # the certificate mysqld makes for itself names no host: VERIFY_IDENTITY fails closed
            ("identity", ("--ssl-mode", "VERIFY_IDENTITY", "--ssl-ca", str(ca)), 2)]
    err = {}
    for name, extra, code in runs:
        p.execute("FLUSH PRIVILEGES")   # empties caching_sha2's cache: the next login is a full authentication
        d = tmp_path / name
        r = _lab_pull(p, d, "repl", *extra)
        assert r.returncode == code, (name, r.stderr)
        err[name] = r.stderr.strip().splitlines()
        if code == 0:
            same = _same_files(p, d)
            assert len(same) >= 3 and set(same.values()) == {True}, (name, same)
        else:
            assert len(err[name]) == 1, r.stderr
    assert " over TLSv1.3 (VERIFY_CA) at binlog.000001:4" in err["tls"][0]
    assert " over TLS" not in err["asked"][0] and " over TLS" not in err["pinned"][0]
    assert "caching_sha2_password full authentication" in err["refused"][0]
    assert "certificate does not check out" in err["identity"][0]
