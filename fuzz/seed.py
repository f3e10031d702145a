#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (fuzz/seeds/<target>/) from the shared meshes
and scenes (../shared, or $RXPIPE_MESHES / $RXPIPE_SCENES): small complete files in every form a
loader reads (OBJ, ascii and both binary PLYs, binary and ascii STL, glTF with a data-URI buffer,
GLB, each also gzipped), heads of the real meshes cut at a line, and mutated copies (a flipped
byte, a huge count, a truncated tail). Run from the repository root: python3 fuzz/seed.py"""
import base64, gzip, json, os, random, re, struct, sys

root = os.path.dirname(os.path.abspath(__file__))
meshes = os.environ.get("RXPIPE_MESHES", os.path.join(root, "..", "..", "shared", "meshes"))
scenes = os.environ.get("RXPIPE_SCENES", os.path.join(root, "..", "..", "shared", "scenes"))
rng = random.Random(7)

def put(target, name, data):
    d = os.path.join(root, "seeds", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)

def read_obj(path, max_faces):
    v, f = [], []
    for line in open(path, errors="replace"):
        w = line.split()
        if not w: continue
        if w[0] == "v": v.append(tuple(float(x) for x in w[1:4]))
        elif w[0] == "f":
            f.append([int(x.split("/")[0]) - 1 for x in w[1:]])
            if len(f) >= max_faces: break
    used = sorted({i for face in f for i in face})
    remap = {o: n for n, o in enumerate(used)}
    return [v[i] for i in used], [[remap[i] for i in face] for face in f]

def obj(v, f):
    return ("".join("v %g %g %g\n" % p for p in v) +
            "".join("f " + " ".join(str(i + 1) for i in face) + "\n" for face in f)).encode()

def ply(v, f, fmt):
    tris = [t for t in f if len(t) == 3]
    head = ("ply\nformat %s 1.0\nelement vertex %d\nproperty float x\nproperty float y\n"
            "property float z\nelement face %d\nproperty list uchar int vertex_indices\n"
            "end_header\n" % (fmt, len(v), len(tris))).encode()
    if fmt == "ascii":
        body = "".join("%g %g %g\n" % p for p in v) + "".join("3 %d %d %d\n" % tuple(t) for t in tris)
        return head + body.encode()
    e = "<" if fmt == "binary_little_endian" else ">"
    body = b"".join(struct.pack(e + "3f", *p) for p in v)
    body += b"".join(struct.pack(e + "B3i", 3, *t) for t in tris)
    return head + body

def stl(v, f, binary):
    tris = [t for t in f if len(t) == 3]
    if binary:
        out = b"\0" * 80 + struct.pack("<I", len(tris))
        for t in tris:
            out += struct.pack("<3f", 0, 0, 1) + b"".join(struct.pack("<3f", *v[i]) for i in t) + b"\0\0"
        return out
    s = "solid seed\n"
    for t in tris:
        s += "facet normal 0 0 1\nouter loop\n" + "".join("vertex %g %g %g\n" % v[i] for i in t) + "endloop\nendfacet\n"
    return (s + "endsolid seed\n").encode()

def gltf_pair(v, f):
    tris = [t for t in f if len(t) == 3]
    pos = b"".join(struct.pack("<3f", *p) for p in v)
    idx = b"".join(struct.pack("<3I", *t) for t in tris)
    lo = [min(p[k] for p in v) for k in range(3)]
    hi = [max(p[k] for p in v) for k in range(3)]
    def doc(uri):
        buf = {"byteLength": len(pos) + len(idx)}
        if uri: buf["uri"] = uri
        return {"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}],
                "nodes": [{"mesh": 0, "children": [1]}, {"mesh": 0, "translation": [1, 0, 0]}],
                "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "indices": 1}]}],
                "buffers": [buf],
                "bufferViews": [{"buffer": 0, "byteLength": len(pos)},
                                {"buffer": 0, "byteOffset": len(pos), "byteLength": len(idx)}],
                "accessors": [{"bufferView": 0, "componentType": 5126, "count": len(v), "type": "VEC3", "min": lo, "max": hi},
                              {"bufferView": 1, "componentType": 5125, "count": 3 * len(tris), "type": "SCALAR"}]}
    uri = "data:application/octet-stream;base64," + base64.b64encode(pos + idx).decode()
    text = json.dumps(doc(uri)).encode()
    j = json.dumps(doc(None)).encode()
    j += b" " * (-len(j) % 4)
    binc = pos + idx
    binc += b"\0" * (-len(binc) % 4)
    glb = struct.pack("<III", 0x46546C67, 2, 12 + 8 + len(j) + 8 + len(binc))
    glb += struct.pack("<II", len(j), 0x4E4F534A) + j + struct.pack("<II", len(binc), 0x004E4942) + binc
    return text, glb

def gltf_sparse():
    # three vertices, the third replaced through a sparse accessor (indices u16, values vec3)
    pos = struct.pack("<9f", 0, 0, 0, 1, 0, 0, 0, 1, 0)
    buf = pos + struct.pack("<H", 2) + b"\0\0" + struct.pack("<3f", 5, 5, 0)
    doc = {"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}], "nodes": [{"mesh": 0}],
           "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
           "buffers": [{"byteLength": len(buf),
                        "uri": "data:application/octet-stream;base64," + base64.b64encode(buf).decode()}],
           "bufferViews": [{"buffer": 0, "byteLength": 36}, {"buffer": 0, "byteOffset": 36, "byteLength": 2},
                           {"buffer": 0, "byteOffset": 40, "byteLength": 12}],
           "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
                          "min": [0, 0, 0], "max": [5, 5, 0],
                          "sparse": {"count": 1, "indices": {"bufferView": 1, "componentType": 5123},
                                     "values": {"bufferView": 2}}}]}
    return json.dumps(doc).encode()

def gltf_quantized():
    # KHR_mesh_quantization: i16 positions (the third replaced through a sparse accessor), i8
    # normalized normals, u16 normalized uvs
    pos = b"".join(struct.pack("<3hxx", *p) for p in [(0, 0, 0), (2, 0, 0), (0, 2, 0)])
    nrm = struct.pack("<4b", 0, 0, 127, 0) * 3
    uv = struct.pack("<6H", 0, 0, 65535, 0, 0, 65535)
    sp = struct.pack("<Bxxx3hxx", 2, 0, 4, 0)
    buf = pos + nrm + uv + sp
    doc = {"asset": {"version": "2.0"}, "extensionsUsed": ["KHR_mesh_quantization"],
           "extensionsRequired": ["KHR_mesh_quantization"], "scene": 0, "scenes": [{"nodes": [0]}],
           "nodes": [{"mesh": 0, "scale": [0.5, 0.5, 0.5]}],
           "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "NORMAL": 1, "TEXCOORD_0": 2}}]}],
           "buffers": [{"byteLength": len(buf),
                        "uri": "data:application/octet-stream;base64," + base64.b64encode(buf).decode()}],
           "bufferViews": [{"buffer": 0, "byteLength": 24, "byteStride": 8},
                           {"buffer": 0, "byteOffset": 24, "byteLength": 12, "byteStride": 4},
                           {"buffer": 0, "byteOffset": 36, "byteLength": 12},
                           {"buffer": 0, "byteOffset": 48, "byteLength": 1},
                           {"buffer": 0, "byteOffset": 52, "byteLength": 6}],
           "accessors": [{"bufferView": 0, "componentType": 5122, "count": 3, "type": "VEC3",
                          "min": [0, 0, 0], "max": [2, 4, 0],
                          "sparse": {"count": 1, "indices": {"bufferView": 3, "componentType": 5121},
                                     "values": {"bufferView": 4}}},
                         {"bufferView": 1, "componentType": 5120, "normalized": True, "count": 3, "type": "VEC3"},
                         {"bufferView": 2, "componentType": 5123, "normalized": True, "count": 3, "type": "VEC2"}]}
    return json.dumps(doc).encode()

def mutants(data):
    out = []
    if len(data) > 8:
        b = bytearray(data); i = rng.randrange(len(b)); b[i] ^= 1 << rng.randrange(8); out.append(bytes(b))
        out.append(data[: rng.randrange(1, len(data))])
    out.append(re.sub(rb"\b\d{1,3}\b", b"4294967295", data, count=1))
    return out

v, f = read_obj(os.path.join(meshes, "suzanne.obj"), 60)
files = {
    "obj": {"small.obj": obj(v, f)},
    "ply": {"ascii.ply": ply(v, f, "ascii"), "le.ply": ply(v, f, "binary_little_endian"),
            "be.ply": ply(v, f, "binary_big_endian")},
    "stl": {"binary.stl": stl(v, f, True), "ascii.stl": stl(v, f, False)},
}
text, glb = gltf_pair(v, f)
files["gltf"] = {"datauri.gltf": text, "small.glb": glb, "sparse.gltf": gltf_sparse(),
                 "quantized.gltf": gltf_quantized()}
for name in sorted(os.listdir(meshes)):
    p = os.path.join(meshes, name)
    if not os.path.isfile(p) or not name.endswith((".obj", ".ply")): continue
    data = open(p, "rb").read()
    head = data[:6000]
    head = head[: head.rfind(b"\n") + 1]
    files[name.rsplit(".", 1)[1]]["head-" + name] = head
for d in ("BoxTextured", "TwoSidedPlane", "VertexColorTest"):
    p = os.path.join(scenes, d, d + ".gltf")
    if os.path.isfile(p):
        doc = json.load(open(p))
        for b in doc.get("buffers", []):
            uri = b.get("uri", "")
            bp = os.path.join(scenes, d, uri)
            if uri and os.path.isfile(bp):
                b["uri"] = "data:application/octet-stream;base64," + base64.b64encode(open(bp, "rb").read()).decode()
        for im in doc.get("images", []):
            im.pop("uri", None)
        files["gltf"][d + ".gltf"] = json.dumps(doc).encode()
for target, fs in files.items():
    for name, data in fs.items():
        put(target, name, data)
        for k, m in enumerate(mutants(data)):
            put(target, "%s.m%d" % (name, k), m)
        # every form also feeds the target that finds the format by content, gzipped too
        put("mesh", name, data)
        put("mesh", name + ".gz", gzip.compress(data, mtime=0))
scene = open(os.path.join(root, "..", "scenes", "default.toml"), "rb").read()
put("scene", "default.toml", scene)
put("scene", "generators.toml", b'[[object]]\ngenerator = "torus"\nsegments = 8\nsides = 4\n'
    b'[[object]]\ngenerator = "grid"\nsegments = 3\nscale = [1.0, 2.0, 3.0]\n'
    b'[[object]]\nmesh = "missing.obj"\n')
for k, m in enumerate(mutants(scene)):
    put("scene", "default.m%d" % k, m)
for k, s in enumerate(["icosphere:3", "torus:8", "grid:7", "rings:1000", "grid:70000", "cube:1", "rings:"]):
    put("spec", "s%d" % k, s.encode())
for k, s in enumerate(["normals", "normals:angle", "smooth:3", "frustum:on", "order:patch", "patch-cull",
                       "normals:area,smooth:cotan:2", "nope:1", "subdivide:levels=2:corner=90,normals"]):
    put("stages", "s%d" % k, s.encode())
print("seeds written under", os.path.join(root, "seeds"))
