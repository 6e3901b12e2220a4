"""The ``conformance matrix`` subcommands: ``build`` the site (signed, for a
collector that publishes it), ``check`` submissions, ``sign`` a record for
submission, ``verify-site`` a published site's signature."""

from __future__ import annotations

import argparse
import sqlite3
import sys


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "matrix", help="build the hardware support matrix from result records",
        description="The published support matrix: generated from result records only.")
    actions = parser.add_subparsers(dest="matrix_command", required=True, metavar="ACTION")
    build = actions.add_parser(
        "build", help="write index.html, matrix.md and matrix.json from records",
        description="Exit status 1 when any record was rejected (the site is still built "
        "from the others and lists what it rejected).")
    build.add_argument("records", nargs="+", metavar="RECORDS",
                       help="record files, or folders searched recursively for *.json")
    build.add_argument("-o", "--output", required=True, metavar="SITE",
                       help="the folder to write the site into (replaced)")
    build.add_argument("--stale-days", type=int, default=30, metavar="N",
                       help="a column whose newest record is older is stale (default 30)")
    build.add_argument("--window", type=int, default=10, metavar="N",
                       help="comparable records per platform that history and flakiness "
                       "look at (default 10)")
    build.add_argument("--index", metavar="FILE",
                       help="the index of records to keep between builds (default: "
                       ".SITE.index.sqlite beside the site); a cache: deleting it rebuilds "
                       "the same site")
    build.add_argument("--signing-key", metavar="PRIVATE_KEY",
                       help="sign the site's matrix.json with this Ed25519 key (matrix.json.sig)")
    build.add_argument("--signer", metavar="NAME", help="who signs, with --signing-key")
    check = actions.add_parser(
        "check", help="check records submitted to matrix/records/ (the review bot)")
    check.add_argument("folder", metavar="FOLDER", help="e.g. matrix/records")
    for action in (build, check):
        action.add_argument("--allow-unreleased", action="store_true",
                            help="show records of kits not listed in released_kits.json "
                            "(a development kit's); the page says so on top and on each column")
    sign = actions.add_parser(
        "sign", help="sign a result record with an Ed25519 key (ssh-keygen -t ed25519)",
        description="Adds a signature over the whole record, in place. Put the public key "
        "in the allowed_signers file of the record's folder (or, for the CI's key, of the "
        "records folder) as 'SIGNER ssh-ed25519 KEY'.")
    sign.add_argument("record", metavar="RECORD")
    sign.add_argument("--key", required=True, metavar="PRIVATE_KEY",
                      help="an OpenSSH or PKCS#8 Ed25519 private key file (never commit it)")
    sign.add_argument("--signer", required=True, metavar="NAME",
                      help="who signs, as the keyring names them (e.g. the vendor, or ci)")
    verify_site = actions.add_parser(
        "verify-site", help="check the signature of a built site's matrix.json")
    verify_site.add_argument("site", metavar="SITE")
    verify_site.add_argument("--allowed-signers", required=True, metavar="FILE",
                             help="the keyring of those who may publish the matrix")


def run(args: argparse.Namespace) -> int:
    # Imported here: every `conformance` command parses these arguments, and only
    # these two need Jinja and the schema validator.
    from conformance.matrix.build import build_matrix
    from conformance.matrix.index import default_index_path
    from conformance.matrix.presentation import plural
    from conformance.matrix.site import SiteError, write_site

    if args.matrix_command == "check":
        return _check(args)
    if args.matrix_command == "sign":
        return _sign(args)
    if args.matrix_command == "verify-site":
        return _verify_site(args)
    if args.stale_days < 0 or args.window < 1:
        print("conformance matrix build: --stale-days must be >= 0 and --window >= 1",
              file=sys.stderr)
        return 2
    if bool(args.signing_key) != bool(args.signer):
        print("conformance matrix build: --signing-key and --signer go together", file=sys.stderr)
        return 2
    index = args.index or default_index_path(args.output)
    try:
        built = build_matrix(args.records, stale_days=args.stale_days, window=args.window,
                             allow_unreleased=args.allow_unreleased, index=index)
    except sqlite3.DatabaseError as exc:
        print(f"conformance matrix build: {index}: not an index of records ({exc}); "
              "delete it, it is a cache", file=sys.stderr)
        return 2
    for rejection in built.matrix.rejected:
        print(f"conformance matrix: rejected {rejection.path}: {rejection.reason}", file=sys.stderr)
    try:
        site = write_site(built, args.output)
    except SiteError as exc:
        print(f"conformance matrix build: {exc}", file=sys.stderr)
        return 2
    rejected = len(built.matrix.rejected)
    print(f"wrote {site}/index.html, matrix.md and matrix.json from "
          f"{plural(len(built.records), 'record')} ({plural(len(built.matrix.columns), 'platform')}; "
          f"{rejected} rejected)")
    print(f"judged {plural(built.judged, 'record file')}; the others were read from the index {index}")
    if args.signing_key:
        from conformance.matrix.site_signature import sign_site
        from conformance.results.signing import SigningError

        try:
            print(sign_site(site, args.signing_key, args.signer))
        except SigningError as exc:
            print(f"conformance matrix build: {exc}", file=sys.stderr)
            return 2
    return 1 if rejected else 0


def _check(args: argparse.Namespace) -> int:
    from conformance.matrix.check import check_submissions
    from conformance.matrix.presentation import plural

    count, problems = check_submissions(args.folder, args.allow_unreleased)
    for problem in problems:
        print(f"conformance matrix check: {problem}", file=sys.stderr)
    if problems:
        print(f"{plural(len(problems), 'problem')} in {plural(count, 'submitted record')}")
        return 1
    print(f"{plural(count, 'submitted record')} verified; the site builds")
    return 0


def _sign(args: argparse.Namespace) -> int:
    from conformance.results.signing import SigningError, sign_file

    try:
        print(sign_file(args.record, args.key, args.signer))
    except SigningError as exc:
        print(f"conformance matrix sign: {exc}", file=sys.stderr)
        return 2
    return 0


def _verify_site(args: argparse.Namespace) -> int:
    from conformance.matrix.site_signature import check_site
    from conformance.results.signing import SigningError

    try:
        print(check_site(args.site, args.allowed_signers))
    except SigningError as exc:
        print(f"conformance matrix verify-site: {exc}", file=sys.stderr)
        return 1
    return 0
