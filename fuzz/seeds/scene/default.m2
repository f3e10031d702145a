# The default scene: procedural meshes only, so it needs no files.
background = [4294967295.05, 0.06, 0.08]

[camera]
eye = [0.0, 1.6, 5.2]
target = [0.0, 0.2, 0.0]
fov_y = 40.0

[light]
direction = [-0.5, -1.0, -0.7]
ambient = 0.12

[[object]]
generator = "icosphere"
level = 5
translate = [-1.3, 0.35, 0.0]
scale = 0.75
color = [0.85, 0.25, 0.2]

[[object]]
generator = "rings"
triangles = 40000
translate = [0.9, 0.45, 0.3]
rotate = [25.0, -30.0, 10.0]
scale = 0.7
color = [0.95, 0.75, 0.2]

[[object]]
generator = "torus"
major = 0.6
minor = 0.18
segments = 96
sides = 32
translate = [0.1, 0.32, 1.3]
rotate = [70.0, 0.0, 0.0]
color = [0.2, 0.55, 0.9]

[[object]]
generator = "grid"
segments = 32
sides = 32
translate = [0.0, -0.45, 0.0]
scale = 3.5
color = [0.6, 0.62, 0.65]
