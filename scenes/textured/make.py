#!/usr/bin/env python3
"""Writes scenes/textured/textured.gltf: rxpipe's own small textured scene, made here from
nothing but arithmetic (no file copied in). A checkered floor (a repeating PNG texture with
mipmaps), a brick cube (base colour and normal textures), a smooth metal sphere, an emissive
ring, a half-transparent pane (alphaMode BLEND) and a leaf cut out by an alpha mask, under a
directional and a point light (KHR_lights_punctual), seen from the file's camera.

Run from anywhere: python3 scenes/textured/make.py (it writes beside itself)."""
import base64, json, math, os, struct, zlib

HERE = os.path.dirname(os.path.abspath(__file__))


def png(w, h, pixel):
    """RGBA8 PNG bytes of pixel(x, y) -> (r, g, b, a)."""
    raw = b"".join(b"\0" + bytes(c for x in range(w) for c in pixel(x, y)) for y in range(h))
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def checker(x, y):
    v = 230 if ((x // 8) + (y // 8)) % 2 == 0 else 40
    return (v, v, v, 255)


def bricks(x, y):
    row = y // 16
    off = 16 if row % 2 else 0
    mortar = y % 16 < 2 or (x + off) % 32 < 2
    if mortar:
        return (200, 195, 185, 255)
    shade = ((x + off) // 32 * 37 + row * 53) % 40
    return (150 + shade, 60 + shade // 2, 45, 255)


def bricks_normal(x, y):
    # mortar grooves: normals tilt towards the groove at brick edges
    row = y // 16
    off = 16 if row % 2 else 0
    nx = ny = 0.0
    if y % 16 < 2:
        ny = 0.6 if y % 16 == 0 else -0.6
    elif (x + off) % 32 < 2:
        nx = 0.6 if (x + off) % 32 == 0 else -0.6
    nz = math.sqrt(max(0.0, 1 - nx * nx - ny * ny))
    return (int((nx * 0.5 + 0.5) * 255), int((ny * 0.5 + 0.5) * 255), int((nz * 0.5 + 0.5) * 255), 255)


def leaf(x, y):
    # an ellipse of green with transparent corners (for the alpha mask)
    u, v = (x + 0.5) / 32 - 1, (y + 0.5) / 32 - 1
    inside = u * u / 0.5 + v * v < 0.9 and abs(u) > 0.03
    return (60, 150, 50, 255 if inside else 0)


class Builder:
    def __init__(self):
        self.bin = bytearray()
        self.views, self.accessors, self.meshes, self.nodes = [], [], [], []

    def add(self, data, fmt, n, kind, comp, target):
        while len(self.bin) % 4:
            self.bin.append(0)
        off = len(self.bin)
        self.bin += struct.pack("<" + fmt * n, *data)
        self.views.append({"buffer": 0, "byteOffset": off, "byteLength": len(self.bin) - off, "target": target})
        a = {"bufferView": len(self.views) - 1, "componentType": comp, "count": n, "type": kind}
        self.accessors.append(a)
        return len(self.accessors) - 1

    def mesh(self, pos, nrm, uv, idx, material, name):
        p = self.add([c for v in pos for c in v], "f", 3 * len(pos), "VEC3", 5126, 34962)
        self.accessors[p]["count"] = len(pos)
        self.accessors[p]["min"] = [min(v[i] for v in pos) for i in range(3)]
        self.accessors[p]["max"] = [max(v[i] for v in pos) for i in range(3)]
        n = self.add([c for v in nrm for c in v], "f", 3 * len(nrm), "VEC3", 5126, 34962)
        self.accessors[n]["count"] = len(nrm)
        t = self.add([c for v in uv for c in v], "f", 2 * len(uv), "VEC2", 5126, 34962)
        self.accessors[t]["count"] = len(uv)
        i = self.add(idx, "I", len(idx), "SCALAR", 5125, 34963)
        self.meshes.append({"name": name, "primitives": [{"attributes": {"POSITION": p, "NORMAL": n, "TEXCOORD_0": t}, "indices": i, "material": material}]})
        return len(self.meshes) - 1


def quad(sx, sz, uvs):
    pos = [(-sx, 0, sz), (sx, 0, sz), (sx, 0, -sz), (-sx, 0, -sz)]
    return pos, [(0, 1, 0)] * 4, [(0, uvs), (uvs, uvs), (uvs, 0), (0, 0)], [0, 1, 2, 0, 2, 3]


def cube():
    pos, nrm, uv, idx = [], [], [], []
    for axis in range(3):
        for s in (1, -1):
            n = [0, 0, 0]
            n[axis] = s
            u = [0, 0, 0]
            u[(axis + 1) % 3] = 1
            v = [0, 0, 0]
            v[(axis + 2) % 3] = 1
            if s < 0:
                u, v = v, u
            base = len(pos)
            for a, b in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
                pos.append(tuple(n[k] + a * u[k] + b * v[k] for k in range(3)))
                nrm.append(tuple(n))
                uv.append(((a + 1) / 2, (1 - b) / 2))
            idx += [base, base + 1, base + 2, base, base + 2, base + 3]
    return pos, nrm, uv, idx


def sphere(r, seg, rings):
    pos, nrm, uv, idx = [], [], [], []
    for j in range(rings + 1):
        th = math.pi * j / rings
        for i in range(seg + 1):
            ph = 2 * math.pi * i / seg
            n = (math.sin(th) * math.cos(ph), math.cos(th), -math.sin(th) * math.sin(ph))
            pos.append(tuple(r * c for c in n))
            nrm.append(n)
            uv.append((i / seg, j / rings))
    for j in range(rings):
        for i in range(seg):
            a, b = j * (seg + 1) + i, (j + 1) * (seg + 1) + i
            idx += [a, b, b + 1, a, b + 1, a + 1]
    return pos, nrm, uv, idx


def torus(R, r, seg, sides):
    pos, nrm, uv, idx = [], [], [], []
    for j in range(sides + 1):
        v = 2 * math.pi * j / sides
        for i in range(seg + 1):
            u = 2 * math.pi * i / seg
            n = (math.cos(v) * math.cos(u), math.sin(v), -math.cos(v) * math.sin(u))
            pos.append(((R + r * math.cos(v)) * math.cos(u), r * math.sin(v), -(R + r * math.cos(v)) * math.sin(u)))
            nrm.append(n)
            uv.append((i / seg, j / sides))
    for j in range(sides):
        for i in range(seg):
            a, b = j * (seg + 1) + i, (j + 1) * (seg + 1) + i
            idx += [a, a + 1, b + 1, a, b + 1, b]
    return pos, nrm, uv, idx


def main():
    b = Builder()
    images = [png(64, 64, checker), png(64, 64, bricks), png(64, 64, bricks_normal), png(64, 64, leaf)]
    uri = lambda d: "data:image/png;base64," + base64.b64encode(d).decode()
    materials = [
        {"name": "floor", "pbrMetallicRoughness": {"baseColorTexture": {"index": 0}, "metallicFactor": 0.0, "roughnessFactor": 0.7}},
        {"name": "bricks", "pbrMetallicRoughness": {"baseColorTexture": {"index": 1}, "metallicFactor": 0.0, "roughnessFactor": 0.9}, "normalTexture": {"index": 2}},
        {"name": "metal", "pbrMetallicRoughness": {"baseColorFactor": [0.95, 0.8, 0.5, 1], "metallicFactor": 1.0, "roughnessFactor": 0.3}},
        {"name": "glow", "pbrMetallicRoughness": {"baseColorFactor": [0.1, 0.1, 0.1, 1], "metallicFactor": 0.0}, "emissiveFactor": [0.2, 0.8, 1.0]},
        {"name": "glass", "pbrMetallicRoughness": {"baseColorFactor": [0.6, 0.8, 1.0, 0.35], "metallicFactor": 0.0, "roughnessFactor": 0.1}, "alphaMode": "BLEND", "doubleSided": True},
        {"name": "leaf", "pbrMetallicRoughness": {"baseColorTexture": {"index": 3}, "metallicFactor": 0.0}, "alphaMode": "MASK", "alphaCutoff": 0.5, "doubleSided": True},
    ]
    m_floor = b.mesh(*quad(4, 4, 8), 0, "floor")
    m_cube = b.mesh(*cube(), 1, "cube")
    m_sphere = b.mesh(*sphere(0.7, 32, 16), 2, "sphere")
    m_ring = b.mesh(*torus(0.6, 0.12, 32, 12), 3, "ring")
    pane = quad(0.9, 1.2, 1)
    m_pane = b.mesh(*pane, 4, "pane")
    m_leaf = b.mesh(*quad(0.6, 0.6, 1), 5, "leaf")
    s45 = math.sin(math.pi / 8)
    c45 = math.cos(math.pi / 8)
    nodes = [
        {"name": "floor", "mesh": m_floor},
        {"name": "cube", "mesh": m_cube, "translation": [-1.6, 0.6, -0.6], "rotation": [0, s45, 0, c45], "scale": [0.6, 0.6, 0.6]},
        {"name": "sphere", "mesh": m_sphere, "translation": [0.2, 0.7, -1.0]},
        {"name": "ring", "mesh": m_ring, "translation": [1.8, 0.75, -0.4], "rotation": [0.5, 0, 0, 0.866]},
        # the pane stands upright (its quad lies in y = 0): turned about x by 90 degrees
        {"name": "pane", "mesh": m_pane, "translation": [0.6, 1.2, 1.0], "rotation": [0.7071, 0, 0, 0.7071]},
        {"name": "leaf", "mesh": m_leaf, "translation": [-0.9, 0.9, 1.2], "rotation": [0.6, 0.2, 0, 0.775]},
        {"name": "sun", "rotation": [-0.40, 0.30, 0.14, 0.86], "extensions": {"KHR_lights_punctual": {"light": 0}}},
        {"name": "lamp", "translation": [1.0, 2.0, 2.0], "extensions": {"KHR_lights_punctual": {"light": 1}}},
        # the camera looks down at the scene from the front (-z is its view direction)
        {"name": "camera", "camera": 0, "translation": [0.0, 2.6, 6.0], "rotation": [-0.17, 0, 0, 0.985]},
    ]
    doc = {
        "asset": {"version": "2.0", "generator": "rxpipe scenes/textured/make.py"},
        "extensionsUsed": ["KHR_lights_punctual"],
        "extensions": {"KHR_lights_punctual": {"lights": [
            {"type": "directional", "color": [1.0, 0.95, 0.9], "intensity": 2.5},
            {"type": "point", "color": [1.0, 0.7, 0.4], "intensity": 12.0, "range": 12.0},
        ]}},
        "scene": 0,
        "scenes": [{"nodes": list(range(len(nodes)))}],
        "nodes": nodes,
        "cameras": [{"type": "perspective", "perspective": {"yfov": 0.75, "znear": 0.1, "zfar": 50.0}}],
        "meshes": b.meshes,
        "materials": materials,
        "samplers": [{"wrapS": 10497, "wrapT": 10497, "magFilter": 9729, "minFilter": 9987}],
        "textures": [{"source": i, "sampler": 0} for i in range(len(images))],
        "images": [{"uri": uri(d)} for d in images],
        "accessors": b.accessors,
        "bufferViews": b.views,
        "buffers": [{"byteLength": len(b.bin), "uri": "data:application/octet-stream;base64," + base64.b64encode(bytes(b.bin)).decode()}],
    }
    with open(os.path.join(HERE, "textured.gltf"), "w") as f:
        json.dump(doc, f, separators=(",", ":"))


main()
