"""Render a kustomization (``kubectl kustomize DIR``) for the subset deploy/k8s uses, in plain
Python, so the tests can render the overlays where neither kustomize nor kubectl is installed.

    python scripts/deploy/kustomize.py deploy/k8s/overlays/local     # the YAML stream

The subset, which is also what the tests compare with the real ``kubectl kustomize`` when it is
on the PATH:

- ``resources``: YAML files (one or more documents) and directories holding a kustomization;
- ``namespace``: set on every namespaced resource (as kustomize: every kind but the
  cluster-scoped ones below); a RoleBinding's ServiceAccount subject follows it when it names
  ``default`` or a ServiceAccount of the same build (kustomize's name references);
- ``images``: ``name`` with ``newName``, ``newTag`` or ``digest``, applied to the ``image`` of
  every item of a ``containers`` or ``initContainers`` list (kustomize leaves other ``image``
  fields, e.g. a SparkApplication's ``spec.image``, alone);
- ``patches``: ``path`` to a JSON 6902 patch (a YAML list of ``add``, ``replace``, ``remove``
  operations) with a ``target`` selecting ``kind`` and ``name``.

Anything else in a kustomization is an error, so the subset cannot silently drift.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import yaml

KUSTOMIZATION = "kustomization.yaml"
SUPPORTED = {"apiVersion", "kind", "resources", "namespace", "images", "patches"}
CLUSTER_SCOPED = {
    "Namespace",
    "ClusterRole",
    "ClusterRoleBinding",
    "CustomResourceDefinition",
    "PersistentVolume",
    "StorageClass",
    "PriorityClass",
    "ValidatingWebhookConfiguration",
    "MutatingWebhookConfiguration",
}


class KustomizeError(ValueError):
    pass


def render(directory: Path) -> list[dict[str, Any]]:
    """The resources of the kustomization in ``directory``, transformed."""
    path = directory / KUSTOMIZATION
    if not path.is_file():
        raise KustomizeError(f"{directory}: no {KUSTOMIZATION}")
    k = yaml.safe_load(path.read_text()) or {}
    unknown = set(k) - SUPPORTED
    if unknown:
        raise KustomizeError(f"{path}: not in the supported subset: {sorted(unknown)}")
    resources: list[dict[str, Any]] = []
    for entry in k.get("resources", ()):
        source = (directory / entry).resolve()
        if source.is_dir():
            resources += render(source)
        elif source.is_file():
            resources += [d for d in yaml.safe_load_all(source.read_text()) if d]
        else:
            raise KustomizeError(f"{path}: resource {entry} does not exist")
    _check_unique(resources, path)
    for patch in k.get("patches", ()):
        resources = _patch(resources, patch, directory, path)
    for image in k.get("images", ()):
        for resource in resources:
            _set_images(resource, image)
    if "namespace" in k:
        accounts = {
            (r["metadata"]["name"], r["metadata"].get("namespace"))
            for r in resources
            if r["kind"] == "ServiceAccount"
        }
        resources = [_set_namespace(r, k["namespace"], accounts) for r in resources]
    return resources


def _check_unique(resources: list[dict[str, Any]], where: Path) -> None:
    seen = set()
    for r in resources:
        key = (r["apiVersion"], r["kind"], r["metadata"].get("namespace"), r["metadata"]["name"])
        if key in seen:
            raise KustomizeError(f"{where}: {key} twice")
        seen.add(key)


def _patch(
    resources: list[dict[str, Any]], patch: dict[str, Any], directory: Path, where: Path
) -> list[dict[str, Any]]:
    if set(patch) != {"path", "target"} or set(patch["target"]) - {"kind", "name"}:
        raise KustomizeError(f"{where}: patches take path and target (kind, name) only: {patch}")
    operations = yaml.safe_load((directory / patch["path"]).read_text())
    target = patch["target"]
    matched = [
        r
        for r in resources
        if r["kind"] == target.get("kind", r["kind"])
        and r["metadata"]["name"] == target.get("name", r["metadata"]["name"])
    ]
    if not matched:
        raise KustomizeError(f"{where}: patch {patch['path']} matches no resource")
    out = []
    for r in resources:
        if any(r is m for m in matched):
            r = copy.deepcopy(r)
            for op in operations:
                json_patch(r, op)
        out.append(r)
    return out


def json_patch(document: Any, op: dict[str, Any]) -> None:
    """One RFC 6902 operation (``add``, ``replace``, ``remove``), in place."""
    kind, pointer = op["op"], op["path"]
    if not pointer.startswith("/"):
        raise KustomizeError(f"bad JSON pointer {pointer!r}")
    tokens = [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]
    parent = document
    for token in tokens[:-1]:
        parent = parent[int(token)] if isinstance(parent, list) else parent[token]
    last = tokens[-1]
    if kind not in ("add", "replace", "remove"):
        raise KustomizeError(f"unsupported patch op {kind!r}")
    if isinstance(parent, list):
        index = len(parent) if last == "-" else int(last)
        if kind == "add":
            parent.insert(index, op["value"])
        elif kind == "replace":
            parent[index] = op["value"]
        else:
            del parent[index]
        return
    if kind != "add" and last not in parent:
        raise KustomizeError(f"{kind} {pointer}: no such member")
    if kind == "remove":
        del parent[last]
    else:
        parent[last] = op["value"]


def _set_images(node: Any, image: dict[str, Any]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("containers", "initContainers") and isinstance(value, list):
                for container in value:
                    if isinstance(container, dict) and "image" in container:
                        container["image"] = _new_image(container["image"], image)
            _set_images(value, image)
    elif isinstance(node, list):
        for item in node:
            _set_images(item, image)


def _new_image(current: str, image: dict[str, Any]) -> str:
    name, tag, digest = _split_image(current)
    if name != image["name"]:
        return current
    name = image.get("newName", name)
    if "digest" in image:
        return f"{name}@{image['digest']}"
    if "newTag" in image:
        return f"{name}:{image['newTag']}"
    return name + (f"@{digest}" if digest else f":{tag}" if tag else "")


def _split_image(image: str) -> tuple[str, str | None, str | None]:
    name, _, digest = image.partition("@")
    slash = name.rfind("/")
    colon = name.rfind(":")
    if colon > slash:
        return name[:colon], name[colon + 1 :], digest or None
    return name, None, digest or None


def _set_namespace(
    resource: dict[str, Any], namespace: str, accounts: set[tuple[str, str | None]]
) -> dict[str, Any]:
    if resource["kind"] in CLUSTER_SCOPED:
        return resource
    resource = copy.deepcopy(resource)
    resource["metadata"]["namespace"] = namespace
    if resource["kind"] == "RoleBinding":
        for subject in resource.get("subjects", ()):
            if subject.get("kind") != "ServiceAccount":
                continue
            ours = (subject["name"], subject.get("namespace")) in accounts
            if ours or subject["name"] == "default":
                subject["namespace"] = namespace
    return resource


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: kustomize.py DIR", file=sys.stderr)
        return 2
    sys.stdout.write(yaml.safe_dump_all(render(Path(args[0])), sort_keys=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
