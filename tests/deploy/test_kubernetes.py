"""deploy/k8s: both overlays render (scripts/deploy/kustomize.py, the subset of kustomize they
use; compared with the real ``kubectl kustomize`` where one is installed), every resource
validates offline (Kubernetes' own kinds with kubernetes-validate's bundled schemas, strict; the
custom resources against the vendored CRDs' openAPIV3Schema with jsonschema), and the shape the
issue asks for: probes, non-root, read-only root filesystem, requests and limits, read-only
broker log dir, RESULTS written by the scan and read by the service."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

from tests.deploy.conftest import DEPLOY, deploy_script

kustomize = deploy_script("kustomize")

K8S = DEPLOY / "k8s"
OVERLAYS = {
    "local": K8S / "overlays" / "local",
    "spark-operator": K8S / "overlays" / "spark-operator",
    "strimzi": K8S / "overlays" / "strimzi",
}
per_broker = deploy_script("per_broker")
CRDS = Path(__file__).parent / "crds"
KUBERNETES_VERSION = "1.30.0"
NAMESPACE = "offsets-auditor"
#: a pod mounts only claims of its own namespace: per-broker scans run in the Kafka cluster's
NAMESPACES = {"local": NAMESPACE, "spark-operator": NAMESPACE, "strimzi": "kafka"}


def crd_schemas() -> dict[tuple[str, str], dict[str, Any]]:
    """(apiVersion, kind) -> openAPIV3Schema of each vendored CRD version."""
    out = {}
    for path in sorted(CRDS.glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
        for version in crd["spec"]["versions"]:
            out[(f"{group}/{version['name']}", kind)] = version["schema"]["openAPIV3Schema"]
    return out


CRD_SCHEMAS = crd_schemas()


def validate(resource: dict[str, Any]) -> None:
    key = (resource["apiVersion"], resource["kind"])
    if key in CRD_SCHEMAS:
        # not jsonschema.validate: it checks the schema's regexes with Python's re, which
        # refuses Go's "^(?i)..." in a pattern none of our resources uses
        schema = CRD_SCHEMAS[key]
        jsonschema.validators.validator_for(schema)(schema).validate(resource)
        return
    kubernetes_validate.validate(resource, KUBERNETES_VERSION, strict=True)


def rendered(overlay: str) -> dict[str, dict[str, Any]]:
    return {r["kind"]: r for r in kustomize.render(OVERLAYS[overlay])}


def cronjobs(overlay: str) -> list[dict[str, Any]]:
    return [r for r in kustomize.render(OVERLAYS[overlay]) if r["kind"] == "CronJob"]


@pytest.fixture(scope="module", params=sorted(OVERLAYS))
def overlay(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_every_resource_validates(overlay: str) -> None:
    resources = kustomize.render(OVERLAYS[overlay])
    kinds = sorted(r["kind"] for r in resources)
    expected = ["Deployment", "PersistentVolumeClaim", "PrometheusRule", "Service"]
    expected += ["ServiceAccount", "ServiceMonitor"]
    expected += {
        "local": ["CronJob"],
        "spark-operator": ["Role", "RoleBinding", "SparkApplication", "ServiceAccount"],
        "strimzi": ["CronJob"] * 3,
    }[overlay]
    assert kinds == sorted(expected)
    for resource in resources:
        validate(resource)
        assert resource["metadata"]["namespace"] == NAMESPACES[overlay]


def test_every_manifest_file_validates_on_its_own() -> None:
    """The files as written (before kustomize), including the base's PrometheusRule."""
    count = 0
    for path in sorted(K8S.rglob("*.yaml")):
        if path.name == kustomize.KUSTOMIZATION:
            continue
        documents = list(yaml.safe_load_all(path.read_text()))
        if isinstance(documents[0], list):  # a JSON 6902 patch
            continue
        for document in documents:
            validate(document)
            count += 1
    assert count == 14


def test_validation_has_teeth() -> None:
    deployment = rendered("local")["Deployment"]
    broken = json.loads(json.dumps(deployment))
    broken["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] = "http"
    with pytest.raises(kubernetes_validate.ValidationError):
        validate(broken)
    spark = rendered("spark-operator")["SparkApplication"]
    broken = json.loads(json.dumps(spark))
    broken["spec"]["driver"]["cores"] = 0
    with pytest.raises(jsonschema.ValidationError):
        validate(broken)
    monitor = rendered("local")["ServiceMonitor"]
    broken = json.loads(json.dumps(monitor))
    del broken["spec"]["selector"]
    with pytest.raises(jsonschema.ValidationError):
        validate(broken)


def containers(pod_spec: dict[str, Any]) -> list[dict[str, Any]]:
    return list(pod_spec["containers"]) + list(pod_spec.get("initContainers", ()))


def check_pod_hardening(pod_spec: dict[str, Any]) -> None:
    assert pod_spec["securityContext"]["runAsNonRoot"] is True
    assert pod_spec["securityContext"]["runAsUser"] == 10001
    assert pod_spec["automountServiceAccountToken"] is False
    for c in containers(pod_spec):
        sc = c["securityContext"]
        assert sc["readOnlyRootFilesystem"] is True
        assert sc["allowPrivilegeEscalation"] is False
        assert sc["capabilities"]["drop"] == ["ALL"]
        for kind in ("requests", "limits"):
            assert {"cpu", "memory"} <= set(c["resources"][kind]), (c["name"], kind)


def mounts(pod_spec: dict[str, Any]) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """mountPath -> (volumeMount, volume) of the first container."""
    volumes = {v["name"]: v for v in pod_spec["volumes"]}
    return {
        m["mountPath"]: (m, volumes[m["name"]]) for m in pod_spec["containers"][0]["volumeMounts"]
    }


def test_service_deployment() -> None:
    r = rendered("local")
    pod = r["Deployment"]["spec"]["template"]["spec"]
    check_pod_hardening(pod)
    (c,) = pod["containers"]
    assert c["args"] == ["serve", "--results", "/results", "--host", "0.0.0.0", "--port", "8080"]
    assert c["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert c["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert c["ports"] == [{"name": "http", "containerPort": 8080, "protocol": "TCP"}]
    mount, volume = mounts(pod)["/results"]
    assert mount["readOnly"] is True
    assert volume["persistentVolumeClaim"] == {
        "claimName": "offsets-auditor-results",
        "readOnly": True,
    }
    assert "/tmp" in mounts(pod)  # the only writable path under a read-only root


def test_service_and_service_monitor_select_the_deployment() -> None:
    r = rendered("local")
    pod_labels = r["Deployment"]["spec"]["template"]["metadata"]["labels"]
    service = r["Service"]
    assert service["spec"]["selector"].items() <= pod_labels.items()
    assert service["spec"]["ports"][0]["targetPort"] == "http"
    monitor = r["ServiceMonitor"]["spec"]
    assert monitor["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert monitor["endpoints"][0]["port"] == service["spec"]["ports"][0]["name"]
    assert monitor["endpoints"][0]["path"] == "/metrics"


def test_scan_cronjob_local_mode() -> None:
    r = rendered("local")
    cron = r["CronJob"]
    assert cron["spec"]["concurrencyPolicy"] == "Forbid"
    pod = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    check_pod_hardening(pod)
    (c,) = pod["containers"]
    args = c["args"]
    assert args[:2] == ["scan", "/kafka-logs"]
    assert args[args.index("--out") + 1] == "/results"
    assert args[args.index("--master") + 1] == "local[2]"
    assert args[args.index("--broker-config") + 1] == "/etc/kafka/server.properties"
    m = mounts(pod)
    log_mount, log_volume = m["/kafka-logs"]
    assert log_mount["readOnly"] is True
    assert log_volume["persistentVolumeClaim"]["readOnly"] is True
    # the overlay's patch chose the claim
    assert log_volume["persistentVolumeClaim"]["claimName"] == "kafka-0-log-dir-snapshot"
    results_mount, results_volume = m["/results"]
    assert not results_mount.get("readOnly")
    assert results_volume["persistentVolumeClaim"]["claimName"] == "offsets-auditor-results"
    assert m["/etc/kafka"][0]["readOnly"] is True


def test_per_broker_scans_are_the_generators_output() -> None:
    assert per_broker.main(["--check"]) == 0, "run: python scripts/deploy/per_broker.py"


def test_one_scan_per_broker_pinned_to_its_node_with_its_volume_read_only() -> None:
    """Strimzi's layout: broker pod <cluster>-kafka-<N> (label strimzi.io/pod-name), its JBOD
    volume 0 the claim data-0-<pod> mounted at /var/lib/kafka/data-0, the log dir
    kafka-log<N> in it, its config the ConfigMap named after the pod (server.config)."""
    jobs = cronjobs("strimzi")
    assert len(jobs) == 3
    publishers = []
    for broker, job in enumerate(sorted(jobs, key=lambda j: j["metadata"]["name"])):
        pod_name = f"my-cluster-kafka-{broker}"
        assert job["spec"]["concurrencyPolicy"] == "Forbid"
        pod = job["spec"]["jobTemplate"]["spec"]["template"]["spec"]
        check_pod_hardening(pod)
        (term,) = pod["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert term == {
            "labelSelector": {"matchLabels": {"strimzi.io/pod-name": pod_name}},
            "topologyKey": "kubernetes.io/hostname",
        }
        args = pod["containers"][0]["args"]
        assert args[:2] == ["scan", f"/var/lib/kafka/data-0/kafka-log{broker}"]
        assert args[args.index("--out") + 1] == "/results"
        assert args[args.index("--broker-config") + 1] == "/etc/kafka/server.config"
        publishers.append(args[args.index("--publisher") + 1])
        m = mounts(pod)
        data_mount, data_volume = m["/var/lib/kafka/data-0"]
        assert data_mount["readOnly"] is True
        assert data_volume["persistentVolumeClaim"] == {
            "claimName": f"data-0-{pod_name}",
            "readOnly": True,
        }
        config_mount, config_volume = m["/etc/kafka"]
        assert config_mount["readOnly"] is True and config_volume["configMap"]["name"] == pod_name
        results_mount, results_volume = m["/results"]
        assert not results_mount.get("readOnly")
        assert results_volume["persistentVolumeClaim"]["claimName"] == "offsets-auditor-results"
    assert len(set(publishers)) == 3  # each publishes under its own name
    # the service reads the same claim, read-only, in the same namespace
    deployment = rendered("strimzi")["Deployment"]["spec"]["template"]["spec"]
    assert mounts(deployment)["/results"][1]["persistentVolumeClaim"]["claimName"] == (
        "offsets-auditor-results"
    )


def test_the_generator_takes_another_cluster(tmp_path: Path) -> None:
    assert per_broker.main(["--cluster", "prod", "--pool", "brokers", "--brokers", "7,9",
                            "--volume", "1", "--out", str(tmp_path)]) == 0  # fmt: skip
    (job,) = [yaml.safe_load(p.read_text()) for p in tmp_path.glob("prod-brokers-9.yaml")]
    pod = job["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert pod["containers"][0]["args"][1] == "/var/lib/kafka/data-1/kafka-log9"
    assert pod["volumes"][0]["persistentVolumeClaim"]["claimName"] == "data-1-prod-brokers-9"
    validate(job)


def test_scan_spark_application() -> None:
    r = rendered("spark-operator")
    app = r["SparkApplication"]["spec"]
    assert app["mode"] == "cluster" and app["type"] == "Python"
    assert app["mainApplicationFile"].endswith("/site-packages/spark_jobs/scan.py")
    assert app["arguments"][0] == "/kafka-logs"
    assert app["image"] == r["Deployment"]["spec"]["template"]["spec"]["containers"][0]["image"]
    volumes = {v["name"]: v for v in app["volumes"]}
    assert volumes["kafka-log-dir"]["persistentVolumeClaim"]["readOnly"] is True
    for role in ("driver", "executor"):
        spec = app[role]
        assert spec["podSecurityContext"]["runAsNonRoot"] is True
        assert spec["cores"] >= 1 and spec["memory"] and spec["coreLimit"]
        by_path = {m["mountPath"]: m for m in spec["volumeMounts"]}
        assert by_path["/kafka-logs"]["readOnly"] is True
        assert "/results" in by_path  # executors write the per-segment cache
    binding = r["RoleBinding"]
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": app["driver"]["serviceAccount"], "namespace": NAMESPACE}
    ]


# --- the renderer ---------------------------------------------------------------------------


def write_tree(root: Path, files: dict[str, Any]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content if isinstance(content, str) else yaml.safe_dump(content))


SYNTHETIC = {
    "base/kustomization.yaml": {"resources": ["deploy.yaml", "rbac.yaml"]},
    "base/deploy.yaml": {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "old"},
        "spec": {
            "template": {
                "spec": {
                    "initContainers": [{"name": "i", "image": "registry:5000/tools/x:1"}],
                    "containers": [
                        {"name": "a", "image": "app:1.0", "args": ["x"]},
                        {"name": "b", "image": "other@sha256:" + "0" * 64},
                    ],
                }
            }
        },
    },
    "base/rbac.yaml": "\n---\n".join(
        yaml.safe_dump(d)
        for d in (
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": {"name": "rb"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
                "subjects": [
                    {"kind": "ServiceAccount", "name": "default"},
                    {"kind": "ServiceAccount", "name": "mine", "namespace": "old"},
                    {"kind": "ServiceAccount", "name": "theirs", "namespace": "elsewhere"},
                    {"kind": "ServiceAccount", "name": "nons"},
                    {"kind": "ServiceAccount", "name": "built"},
                    {"kind": "User", "name": "u"},
                ],
            },
            {
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {"name": "mine", "namespace": "old"},
            },
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "built"}},
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole",
                "metadata": {"name": "cr"},
                "rules": [],
            },
        )
    ),
    "overlay/kustomization.yaml": {
        "namespace": "new",
        "resources": ["../base"],
        "images": [
            {"name": "app", "newName": "registry.example/app", "newTag": "2.0"},
            {"name": "registry:5000/tools/x", "digest": "sha256:" + "1" * 64},
        ],
        "patches": [{"path": "p.yaml", "target": {"kind": "Deployment", "name": "d"}}],
    },
    "overlay/p.yaml": [
        {"op": "add", "path": "/spec/template/spec/containers/0/args/-", "value": "z"},
        {"op": "replace", "path": "/spec/template/spec/containers/0/args/0", "value": "w"},
        {"op": "add", "path": "/spec/replicas", "value": 2},
        {"op": "remove", "path": "/spec/template/spec/containers/1"},
    ],
}


def test_renderer_on_every_feature_of_the_subset(tmp_path: Path) -> None:
    write_tree(tmp_path, SYNTHETIC)
    out = {r["kind"]: r for r in kustomize.render(tmp_path / "overlay")}
    assert len(out) == 4
    d = out["Deployment"]
    assert d["metadata"]["namespace"] == "new"
    assert d["spec"]["replicas"] == 2
    pod = d["spec"]["template"]["spec"]
    assert pod["containers"] == [
        {"name": "a", "image": "registry.example/app:2.0", "args": ["w", "z"]}
    ]
    assert pod["initContainers"][0]["image"] == "registry:5000/tools/x@sha256:" + "1" * 64
    # as kustomize: "default", and the ServiceAccounts of the same build
    assert [s.get("namespace") for s in out["RoleBinding"]["subjects"]] == [
        "new",
        "new",
        "elsewhere",
        None,
        "new",
        None,
    ]
    assert "namespace" not in out["ClusterRole"]["metadata"]


def test_renderer_refuses_what_it_does_not_implement(tmp_path: Path) -> None:
    write_tree(tmp_path, {"kustomization.yaml": {"resources": [], "commonLabels": {"a": "b"}}})
    with pytest.raises(kustomize.KustomizeError, match="commonLabels"):
        kustomize.render(tmp_path)


KUBECTL = shutil.which("kubectl")


def real_kustomize(directory: Path) -> list[dict[str, Any]]:
    assert KUBECTL is not None
    done = subprocess.run(
        [KUBECTL, "kustomize", str(directory)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return [d for d in yaml.safe_load_all(done.stdout) if d]


def by_key(resources: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["kind"], r["metadata"]["name"]): r for r in resources}


@pytest.mark.skipif(KUBECTL is None, reason="no kubectl on the PATH to compare with")
def test_renderer_equals_kubectl_kustomize(tmp_path: Path) -> None:
    """Where kubectl is installed, its kustomize renders the same resources as ours: both
    overlays and the synthetic tree above."""
    write_tree(tmp_path, SYNTHETIC)
    for directory in (*OVERLAYS.values(), tmp_path / "overlay"):
        assert by_key(kustomize.render(directory)) == by_key(real_kustomize(directory)), directory
