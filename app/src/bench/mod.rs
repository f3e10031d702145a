//! `rxpipe bench`: the paper's tables measured on this machine, one module per benchmark
//! ([`geometry`], [`frame`], [`frustum`], [`reindex`], [`rxmesh`], [`distance`], [`simplify`],
//! [`processing`]). GPU inputs stay on the device; every GPU time is the
//! median of CUDA-event timings after a warm-up. This module holds what they share: the
//! benchmark meshes, the machine a report was measured on, and the date.

use glam::Vec3;
use rayon::prelude::*;
use rxpipe::geometry::VertexOrder;
use rxpipe::gpu::Gpu;
use rxpipe::{Error, Mesh};
use serde::Serialize;

pub mod distance;
pub mod frame;
pub mod frustum;
pub mod geometry;
pub mod processing;
pub mod reindex;
pub mod rxmesh;
pub mod simplify;

/// The meshes of the geometry benchmark, by name: the shared bunny and ogre, the icosphere of
/// level 9 (5.2 M triangles) and a grid of 104 bunnies (7.2 M triangles), all in Forsyth order.
pub const GEOMETRY_MESHES: [&str; 4] = ["bunny", "ogre", "icosphere:9", "bunny-grid:104"];

/// The benchmarks' names on a machine without ../shared/meshes (a fresh clone): each name that
/// needs a shared mesh becomes a generated mesh of about its size, and a notice says which, so
/// that every benchmark's defaults run anywhere. Names that need nothing shared stay; a mesh
/// pair of ../shared/meshes/distance becomes a pair of crossing generated meshes. Where the
/// shared meshes are found, the names stay as they are and there is no notice.
pub fn stand_ins(names: &[&str]) -> (Vec<String>, Option<String>) {
    if rxpipe::io::shared_meshes_dir().is_some() {
        return (names.iter().map(|n| n.to_string()).collect(), None);
    }
    let mut out: Vec<String> = Vec::new();
    let mut said = Vec::new();
    for &n in names {
        let stand_in = match n {
            "bunny" => Some("icosphere:6".to_string()),
            "ogre" => Some("torus:430".to_string()),
            n if n.starts_with("bunny-grid:") => n[11..]
                .parse::<u64>()
                .ok()
                .map(|k| format!("rings:{}", (69_451 * k).min(400_000_000))),
            n if distance::PAIRS.contains(&n) => Some(
                match n.rsplit('_').next().and_then(|t| t.parse::<u32>().ok()) {
                    Some(t) if t >= 100_000 => "rings:200000+icosphere:7",
                    Some(t) if t >= 10_000 => "icosphere:6+torus:200",
                    _ => "icosphere:4+torus:60",
                }
                .to_string(),
            ),
            n if n.ends_with(".obj") || n.ends_with(".ply") => Some("torus:200".to_string()),
            _ => None,
        };
        let name = match stand_in {
            Some(s) => {
                said.push(format!("{n} as {s}"));
                s
            }
            None => n.to_string(),
        };
        if !out.contains(&name) {
            out.push(name);
        }
    }
    let notice = (!said.is_empty()).then(|| {
        format!(
            "../shared/meshes was not found (set RXPIPE_MESHES to the folder): measuring {} \
             instead",
            said.join(", ")
        )
    });
    (out, notice)
}

/// Loads a benchmark mesh by name (a shared mesh, a generator spec, or `bunny-grid:N`).
pub fn bench_mesh(name: &str) -> Result<Mesh, Error> {
    let shared = |f: &str| -> Result<Mesh, Error> {
        let dir = rxpipe::io::shared_meshes_dir().ok_or_else(|| {
            Error::Backend(format!(
                "the benchmark needs {f} from ../shared/meshes (or set RXPIPE_MESHES)"
            ))
        })?;
        Ok(rxpipe::io::load_mesh(dir.join(f))?)
    };
    Ok(match name {
        "bunny" => shared("stanford-bunny.obj")?,
        "ogre" => shared("ogre.obj")?,
        n if n.starts_with("bunny-grid:") => {
            let count: usize = n[11..]
                .parse()
                .map_err(|_| Error::Backend(format!("bad grid size in '{n}'")))?;
            bunny_grid(&shared("stanford-bunny.obj")?, count)?
        }
        n if rxpipe::mesh::looks_like_spec(n) => rxpipe::mesh::from_spec(n)?,
        // a file of the shared meshes by its name (fandisk.obj, igea.ply)
        n if rxpipe::io::shared_meshes_dir().is_some_and(|d| d.join(n).is_file()) => shared(n)?,
        n => {
            return Err(Error::Backend(format!(
                "unknown benchmark mesh '{n}' (bunny, ogre, bunny-grid:N, a file name of \
                 ../shared/meshes, or a generator: {})",
                rxpipe::mesh::SPECS
            )))
        }
    })
}

/// `count` copies of `m` on a square-ish grid in the xz plane, in Forsyth order copy by copy.
/// The copies are written in parallel into buffers sized once (a billion triangles take
/// seconds); a grid whose vertices or indices a 32-bit index cannot count is refused
/// ([`bunny_grid_scene`] splits such a grid into several objects).
pub fn bunny_grid(m: &Mesh, count: usize) -> Result<Mesh, Error> {
    let (base, offset) = grid_layout(m, count);
    let (nv, ni) = (base.positions.len() as u128, base.indices.len() as u128);
    for (what, n) in [("vertices", nv), ("indices", ni)] {
        if n * count as u128 > u32::MAX as u128 {
            return Err(Error::Backend(format!(
                "a grid of {count} copies has {} {what}, more than 32-bit indices count",
                n * count as u128
            )));
        }
    }
    check_grid_host(&base, count, &m.name)?;
    Ok(grid_part(&base, &offset, 0..count, &m.name))
}

/// The scene of `bunny-grid:N` for whole frames: [`bunny_grid`]'s copies, as one object, or as
/// several where one mesh would have more vertices or indices than 32-bit indices count (each
/// object as many whole copies as fit), so that a grid is refused only for want of memory.
/// `check` is given the objects' sizes before any is made (to refuse a grid a pipeline cannot
/// prepare before the host spends memory on it).
pub fn bunny_grid_scene(
    m: &Mesh,
    count: usize,
    name: &str,
    check: impl Fn(&[rxpipe::footprint::Counts]) -> Result<(), Error>,
) -> Result<rxpipe::Scene, Error> {
    let (base, offset) = grid_layout(m, count);
    let per = |n: usize| u32::MAX as usize / n.max(1);
    let most = per(base.positions.len())
        .min(per(base.indices.len()))
        .max(1);
    check_grid_host(&base, count, &m.name)?;
    let one = rxpipe::footprint::Counts::of(&base).copied(base.normals.is_none());
    let sizes: Vec<_> = (0..count)
        .step_by(most)
        .map(|first| {
            let copies = ((first + most).min(count) - first) as u64;
            rxpipe::footprint::Counts {
                vertices: one.vertices * copies,
                triangles: one.triangles * copies,
                ..one
            }
        })
        .collect();
    check(&sizes)?;
    let parts = (0..count)
        .step_by(most)
        .map(|first| grid_part(&base, &offset, first..(first + most).min(count), &m.name))
        .collect();
    Ok(rxpipe::Scene::from_meshes(name, parts))
}

/// Refuses a grid of `count` copies of `base` that the host cannot hold, before any is made.
fn check_grid_host(base: &Mesh, count: usize, name: &str) -> Result<(), Error> {
    rxpipe::limits::check_host((base.bytes() as u64).saturating_mul(count as u64), || {
        format!("a grid of {count} copies of {name}")
    })
    .map_err(|e| Error::Backend(e.to_string()))
}

/// Copies `copies` of the grid of `base` laid out by `offset`, as one mesh (their vertices and
/// indices counted by 32-bit indices).
fn grid_part(
    base: &Mesh,
    offset: &(impl Fn(usize) -> Vec3 + Sync),
    copies: std::ops::Range<usize>,
    name: &str,
) -> Mesh {
    let (nv, ni) = (base.positions.len(), base.indices.len());
    let count = copies.len();
    let mut positions = vec![Vec3::ZERO; nv * count];
    positions
        .par_chunks_mut(nv.max(1))
        .enumerate()
        .for_each(|(k, out)| {
            let t = offset(copies.start + k);
            for (o, p) in out.iter_mut().zip(&base.positions) {
                *o = *p + t;
            }
        });
    let mut indices = vec![0u32; ni * count];
    indices
        .par_chunks_mut(ni.max(1))
        .enumerate()
        .for_each(|(k, out)| {
            let first = (k * nv) as u32;
            for (o, &i) in out.iter_mut().zip(&base.indices) {
                *o = i + first;
            }
        });
    // (a translation leaves every other attribute as it is)
    Mesh {
        name: match copies.start {
            0 => format!("{name} grid of {count}"),
            s => format!("{name} grid, copies {s} to {}", copies.end - 1),
        },
        positions,
        indices,
        normals: base.normals.as_ref().map(|v| v.repeat(count)),
        uvs: base.uvs.as_ref().map(|v| v.repeat(count)),
        uvs1: base.uvs1.as_ref().map(|v| v.repeat(count)),
        colors: base.colors.as_ref().map(|v| v.repeat(count)),
        tangents: base.tangents.as_ref().map(|v| v.repeat(count)),
        ..Default::default()
    }
}

/// `m` in Forsyth order and the offset of copy k of a grid of `count` (square-ish, in the xz
/// plane, a tenth of the mesh's size apart): the layout of [`bunny_grid`] and
/// [`bunny_instances`].
fn grid_layout(m: &Mesh, count: usize) -> (Mesh, impl Fn(usize) -> Vec3 + Sync) {
    let mut base = m.clone();
    VertexOrder::Forsyth.arrange(&mut base);
    let (lo, hi) = base.bounds().unwrap_or((Vec3::ZERO, Vec3::ONE));
    let step = (hi - lo) * 1.1;
    let cols = ((count as f64).sqrt().ceil() as usize).max(1);
    let offset =
        move |k: usize| Vec3::new((k % cols) as f32 * step.x, 0.0, (k / cols) as f32 * step.z);
    (base, offset)
}

/// The scene of `bunny-instances:N` (and `MESH*N`): one object, `m` in Forsyth order, drawn as
/// `count` instances laid out as [`bunny_grid`] lays out its copies (the same triangles in the
/// same places), the mesh held once.
pub fn grid_instances(m: &Mesh, count: usize) -> rxpipe::Scene {
    let (base, offset) = grid_layout(m, count);
    let mut scene = rxpipe::Scene::from_meshes(&format!("{} instances", m.name), vec![base]);
    scene.objects[0].instances = Some(
        (0..count)
            .map(|k| glam::Mat4::from_translation(offset(k)))
            .collect(),
    );
    scene
}

#[derive(Debug, Clone, Serialize)]
pub struct MeshRow {
    pub mesh: String,
    pub vertices: usize,
    pub triangles: usize,
}

/// Where and when a report was measured.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Machine {
    pub device: String,
    pub driver: String,
    pub nvrtc: String,
    pub date: String,
}

impl Machine {
    pub(crate) fn of(gpu: &Gpu, info: &rxpipe::gpu::CudaInfo) -> Machine {
        Machine {
            device: gpu.name.clone(),
            driver: info
                .driver_version
                .map_or("?".into(), |v| format!("{}.{}", v / 1000, (v % 1000) / 10)),
            nvrtc: format!("{}.{}", gpu.nvrtc_version.0, gpu.nvrtc_version.1),
            date: today(),
        }
    }

    /// The host's processor, for benchmarks of the CPU backend (driver and NVRTC empty).
    pub(crate) fn host() -> Machine {
        Machine {
            device: format!(
                "{}, {} threads, fragment stage {}",
                reindex::cpu_name(),
                rayon::current_num_threads(),
                rxpipe::raster::fragment_isa()
            ),
            driver: String::new(),
            nvrtc: String::new(),
            date: today(),
        }
    }
}

impl std::fmt::Display for Machine {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        if self.driver.is_empty() {
            return write!(f, "{}, {}", self.device, self.date);
        }
        write!(
            f,
            "{} (driver {}, NVRTC {}), {}",
            self.device, self.driver, self.nvrtc, self.date
        )
    }
}

/// Today's date (UTC) as YYYY-MM-DD, from the system clock.
pub fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    // civil-from-days (Howard Hinnant's algorithm)
    let z = secs.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + (m <= 2) as i64;
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The grid is its copies appended one after another, each moved by its place's offset.
    #[test]
    fn a_grid_is_its_copies_appended() {
        let mut m = rxpipe::mesh::from_spec("icosphere:2").unwrap();
        m.uvs = Some(vec![glam::Vec2::new(0.25, 0.5); m.vertex_count()]);
        let count = 7;
        let grid = bunny_grid(&m, count).unwrap();
        let mut base = m.clone();
        VertexOrder::Forsyth.arrange(&mut base);
        let (lo, hi) = base.bounds().unwrap();
        let step = (hi - lo) * 1.1;
        let mut want = Mesh::default();
        for k in 0..count {
            let mut c = base.clone();
            let (i, j) = ((k % 3) as f32, (k / 3) as f32);
            c.transform(glam::Mat4::from_translation(Vec3::new(
                i * step.x,
                0.0,
                j * step.z,
            )));
            want.append(&c);
        }
        assert_eq!(grid.indices, want.indices);
        assert_eq!(grid.positions, want.positions);
        assert_eq!(grid.uvs, want.uvs);
        assert_eq!(grid.normals.is_some(), want.normals.is_some());
        assert_eq!(grid.triangle_count(), count * m.triangle_count());
    }

    #[test]
    fn a_grid_past_32_bit_indices_is_refused() {
        let m = rxpipe::mesh::from_spec("icosphere:2").unwrap();
        let e = bunny_grid(&m, 1 << 30).unwrap_err().to_string();
        assert!(e.contains("32-bit"), "{e}");
    }

    /// A frame's grid is the same copies in the same places, as one object while 32-bit
    /// indices count it, and past that as several objects of whole copies, which together are
    /// the grid (the split shown on a small grid, in parts of three copies).
    #[test]
    fn a_frames_grid_is_split_where_32_bit_indices_end() {
        let m = rxpipe::mesh::from_spec("icosphere:2").unwrap();
        let one = bunny_grid(&m, 7).unwrap();
        let scene = bunny_grid_scene(&m, 7, "g", |_| Ok(())).unwrap();
        assert_eq!(scene.objects.len(), 1);
        assert_eq!(scene.objects[0].mesh.positions, one.positions);
        assert_eq!(scene.objects[0].mesh.indices, one.indices);
        // (the split itself on a small grid: parts of at most `most` copies)
        let (base, offset) = grid_layout(&m, 7);
        let parts: Vec<Mesh> = (0..7)
            .step_by(3)
            .map(|f| grid_part(&base, &offset, f..(f + 3).min(7), "m"))
            .collect();
        assert_eq!(
            parts.iter().map(|p| p.triangle_count()).collect::<Vec<_>>(),
            [
                3 * m.triangle_count(),
                3 * m.triangle_count(),
                m.triangle_count()
            ]
        );
        let mut joined = Mesh::default();
        for p in &parts {
            joined.append(p);
        }
        assert_eq!(joined.positions, one.positions);
        assert_eq!(joined.indices, one.indices);
        assert!(parts[1].name.contains("copies 3 to 5"), "{}", parts[1].name);
    }
}
