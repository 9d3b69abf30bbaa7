// Realistic pod watch events for the decode benchmarks (shared by
// benches/decode.rs and tests/wasm_bench_decode.rs through `include!`).
//
// Each pod is ~2.5 KB: labels, annotations, an owner reference, managedFields,
// two containers with env, ports, probes and resources, volumes, and a status
// with conditions and container statuses — the shape a real cluster streams.

/// One pod as JSON, varied by `i`.
fn pod_json(i: usize, rv: u64) -> String {
    let ns = ["default", "kube-system", "payments", "frontend", "data"][i % 5];
    let app = ["web", "api", "worker", "cache", "db", "gateway", "ingest"][i % 7];
    let hash = format!("{:08x}", (i as u64).wrapping_mul(0x9E37_79B9) & 0xffff_ffff);
    let node = format!("node-{:03}", i % 97);
    let phase = if i.is_multiple_of(11) { "Pending" } else { "Running" };
    format!(
        concat!(
            r#"{{"kind":"Pod","apiVersion":"v1","metadata":{{"name":"{app}-{hash}-{i}","generateName":"{app}-{hash}-","namespace":"{ns}","uid":"6f1c{hash}-1e2d-4b6a-9c3f-{i:012}","resourceVersion":"{rv}","generation":1,"creationTimestamp":"2026-07-20T10:{m:02}:{s:02}Z","#,
            r#""labels":{{"app":"{app}","pod-template-hash":"{hash}","tier":"backend","version":"v{v}","team":"platform-é"}},"#,
            r#""annotations":{{"kubectl.kubernetes.io/restartedAt":"2026-07-19T08:00:00Z","prometheus.io/scrape":"true","prometheus.io/port":"9090"}},"#,
            r#""ownerReferences":[{{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"{app}-{hash}","uid":"a1b2{hash}-0000-4000-8000-000000000001","controller":true,"blockOwnerDeletion":true}}],"#,
            r#""managedFields":[{{"manager":"kube-controller-manager","operation":"Update","apiVersion":"v1","time":"2026-07-20T10:00:00Z","fieldsType":"FieldsV1","fieldsV1":{{"f:metadata":{{"f:generateName":{{}},"f:labels":{{".":{{}},"f:app":{{}},"f:pod-template-hash":{{}}}},"f:ownerReferences":{{".":{{}},"k:{{\"uid\":\"a1b2\"}}":{{}}}}}},"f:spec":{{"f:containers":{{"k:{{\"name\":\"{app}\"}}":{{".":{{}},"f:image":{{}},"f:name":{{}}}}}}}}}}}}]}},"#,
            r#""spec":{{"containers":[{{"name":"{app}","image":"registry.example.com/{app}:1.{v}.3","command":["/bin/{app}","--port=8080","--log-level=info"],"ports":[{{"name":"http","containerPort":8080,"protocol":"TCP"}}],"#,
            r#""env":[{{"name":"POD_NAME","valueFrom":{{"fieldRef":{{"apiVersion":"v1","fieldPath":"metadata.name"}}}}}},{{"name":"LOG_FORMAT","value":"json"}},{{"name":"GREETING","value":"grüß dich \"world\" \\o/"}}],"#,
            r#""resources":{{"limits":{{"cpu":"500m","memory":"512Mi"}},"requests":{{"cpu":"100m","memory":"128Mi"}}}},"#,
            r#""volumeMounts":[{{"name":"config","mountPath":"/etc/{app}"}}],"terminationMessagePath":"/dev/termination-log","imagePullPolicy":"IfNotPresent"}}],"#,
            r#""volumes":[{{"name":"config","configMap":{{"name":"{app}-config","defaultMode":420}}}}],"#,
            r#""restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","serviceAccountName":"{app}","nodeName":"{node}","schedulerName":"default-scheduler","priority":0,"enableServiceLinks":true}},"#,
            r#""status":{{"phase":"{phase}","conditions":[{{"type":"Initialized","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-07-20T10:00:01Z"}},{{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-07-20T10:00:09Z"}}],"#,
            r#""hostIP":"10.0.{a}.{b}","podIP":"10.244.{a}.{b}","podIPs":[{{"ip":"10.244.{a}.{b}"}}],"startTime":"2026-07-20T10:00:00Z","containerStatuses":[{{"name":"{app}","state":{{"running":{{"startedAt":"2026-07-20T10:00:04Z"}}}},"lastState":{{}},"ready":true,"restartCount":{r},"image":"registry.example.com/{app}:1.{v}.3","imageID":"registry.example.com/{app}@sha256:{hash}{hash}{hash}{hash}","containerID":"containerd://{hash}{hash}{hash}{hash}","started":true}}],"qosClass":"Burstable"}}}}"#
        ),
        app = app,
        hash = hash,
        i = i,
        ns = ns,
        rv = rv,
        m = i % 60,
        s = (i / 60) % 60,
        v = i % 13,
        node = node,
        phase = phase,
        a = (i / 250) % 250,
        b = i % 250,
        r = i % 4,
    )
}

/// About `target_bytes` of watch lines (`MODIFIED` mostly, some `ADDED` and
/// `DELETED`, a bookmark now and then), and how many events they hold.
fn watch_stream(target_bytes: usize) -> (Vec<u8>, usize) {
    let mut out = Vec::with_capacity(target_bytes + 4096);
    let mut n = 0usize;
    while out.len() < target_bytes {
        let rv = 1_000_000 + n as u64;
        if n % 500 == 499 {
            out.extend_from_slice(
                format!(
                    r#"{{"type":"BOOKMARK","object":{{"kind":"Pod","apiVersion":"v1","metadata":{{"resourceVersion":"{rv}"}}}}}}"#
                )
                .as_bytes(),
            );
        } else {
            let ty = match n % 20 {
                0 => "ADDED",
                1 => "DELETED",
                _ => "MODIFIED",
            };
            out.extend_from_slice(br#"{"type":""#);
            out.extend_from_slice(ty.as_bytes());
            out.extend_from_slice(br#"","object":"#);
            out.extend_from_slice(pod_json(n % 5000, rv).as_bytes());
            out.push(b'}');
        }
        out.push(b'\n');
        n += 1;
    }
    (out, n)
}

/// A LIST body of `n` pods.
#[allow(dead_code)]
fn list_body(n: usize) -> Vec<u8> {
    let mut out = br#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"999","continue":"tok","remainingItemCount":7},"items":["#.to_vec();
    for i in 0..n {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(pod_json(i, 1000 + i as u64).as_bytes());
    }
    out.extend_from_slice(b"]}");
    out
}
