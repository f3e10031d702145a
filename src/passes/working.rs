//! The mesh a pass works on: a host copy and, with the CUDA backend, a device copy, each marked
//! current or stale, so that a mesh stays on the device from one GPU pass to the next and moves
//! only when a pass needs the other side (each move is recorded for the stage reports).

#[cfg(feature = "cuda")]
pub use crate::gpu::DeviceAttributes;
use crate::gpu::GpuError;
#[cfg(feature = "cuda")]
use crate::gpu::{Context, Gpu};
use rxpipe_core::mesh::Mesh;
use std::borrow::Cow;

/// The attributes of a mesh that stay on the host while GPU stages work on it (the draw reads
/// them per source vertex): vertex colours, tangents, the second uv set.
#[derive(Debug, Clone, Default)]
pub struct HostAttributes {
    pub colors: Option<Vec<glam::Vec4>>,
    pub tangents: Option<Vec<glam::Vec4>>,
    pub uvs1: Option<Vec<glam::Vec2>>,
}

/// One object's mesh while it passes through the stages. The host copy may be borrowed (a
/// scene's mesh, prepared as it is): it is copied only when a pass changes it.
pub struct WorkingMesh<'a> {
    host: Cow<'a, Mesh>,
    host_current: bool,
    #[cfg(feature = "cuda")]
    device: Option<DeviceAttributes>,
    device_current: bool,
    /// the moves between host and device, in order
    moves: Vec<String>,
    /// the patching the patch order left, for the index buffer as it is now (cleared whenever
    /// either copy may change)
    patching: Option<crate::patch::Patching>,
}

impl WorkingMesh<'static> {
    /// A mesh on the host.
    pub fn new(mesh: Mesh) -> WorkingMesh<'static> {
        WorkingMesh::of(Cow::Owned(mesh))
    }
}

impl<'a> WorkingMesh<'a> {
    /// A mesh on the host, borrowed until a pass changes it.
    pub fn borrowing(mesh: &'a Mesh) -> WorkingMesh<'a> {
        WorkingMesh::of(Cow::Borrowed(mesh))
    }

    /// A mesh on the host, owned or borrowed.
    pub fn of(host: Cow<'a, Mesh>) -> WorkingMesh<'a> {
        WorkingMesh {
            host,
            host_current: true,
            #[cfg(feature = "cuda")]
            device: None,
            device_current: false,
            moves: Vec::new(),
            patching: None,
        }
    }

    /// The vertex colours, where they still belong to the vertices (a GPU stage that changed the
    /// vertex count leaves them behind; see [`WorkingMesh::host`]).
    pub fn colors(&self) -> Option<&[glam::Vec4]> {
        let n = self.vertex_count();
        self.host.colors.as_deref().filter(|c| c.len() == n)
    }

    /// The tangents, where they still belong to the vertices (as [`WorkingMesh::colors`]).
    pub fn tangents(&self) -> Option<&[glam::Vec4]> {
        let n = self.vertex_count();
        self.host.tangents.as_deref().filter(|t| t.len() == n)
    }

    /// The second uv set, where it still belongs to the vertices (as [`WorkingMesh::colors`]).
    pub fn uvs1(&self) -> Option<&[glam::Vec2]> {
        let n = self.vertex_count();
        self.host.uvs1.as_deref().filter(|t| t.len() == n)
    }

    /// Whether the mesh has host-only attributes (colours, tangents, a second uv set) that
    /// follow its vertices.
    pub fn has_host_attributes(&self) -> bool {
        self.colors().is_some() || self.tangents().is_some() || self.uvs1().is_some()
    }

    /// Re-maps the host-only attributes through `corners` (new vertex `i` takes old vertex
    /// `corners[i]`'s) for a stage that rebuilt the vertices on the device (flat normals: one
    /// vertex per triangle corner). They stay on the host, where the draw reads them.
    pub fn remap_host_attributes(&mut self, corners: &[u32]) {
        fn remap<T: Copy>(a: &mut Option<Vec<T>>, corners: &[u32], none: T) {
            if let Some(c) = a.as_ref() {
                let remapped = corners
                    .iter()
                    .map(|&i| c.get(i as usize).copied().unwrap_or(none))
                    .collect();
                *a = Some(remapped);
            }
        }
        let host = self.host.to_mut();
        remap(&mut host.colors, corners, glam::Vec4::ONE);
        remap(&mut host.tangents, corners, glam::Vec4::ZERO);
        remap(&mut host.uvs1, corners, glam::Vec2::ZERO);
    }

    /// Replaces the host-only attributes (a GPU stage that made new vertices computes theirs on
    /// the host; they must have one value per vertex of the current side).
    pub fn set_host_attributes(&mut self, a: HostAttributes) {
        let host = self.host.to_mut();
        host.colors = a.colors;
        host.tangents = a.tangents;
        host.uvs1 = a.uvs1;
    }

    /// The host-only attributes that still belong to the vertices, copied.
    pub fn host_attributes(&self) -> HostAttributes {
        HostAttributes {
            colors: self.colors().map(<[_]>::to_vec),
            tangents: self.tangents().map(<[_]>::to_vec),
            uvs1: self.uvs1().map(<[_]>::to_vec),
        }
    }

    /// The patching of the index buffer as it is now, when the patch order made one.
    pub fn patching(&self) -> Option<&crate::patch::Patching> {
        self.patching.as_ref()
    }

    /// The host mesh (downloaded first when the device copy is newer) with the patching of its
    /// index buffer, when the patch order made one.
    pub fn host_with_patching(
        &mut self,
    ) -> Result<(&Mesh, Option<&crate::patch::Patching>), GpuError> {
        self.host()?;
        Ok((&self.host, self.patching.as_ref()))
    }

    /// Records the patching of the index buffer as it is now (after changing it).
    pub fn set_patching(&mut self, p: Option<crate::patch::Patching>) {
        self.patching = p;
    }

    /// The mesh's name (for messages).
    pub fn name(&self) -> &str {
        &self.host.name
    }

    /// Vertices, on whichever side is current.
    pub fn vertex_count(&self) -> usize {
        #[cfg(feature = "cuda")]
        if let (Some(d), false) = (&self.device, self.host_current) {
            return d.vertex_count;
        }
        self.host.vertex_count()
    }

    /// Triangles, on whichever side is current.
    pub fn triangle_count(&self) -> usize {
        #[cfg(feature = "cuda")]
        if let (Some(d), false) = (&self.device, self.host_current) {
            return d.index_count / 3;
        }
        self.host.triangle_count()
    }

    /// Whether the mesh has normals (on whichever side is current).
    pub fn has_normals(&self) -> bool {
        #[cfg(feature = "cuda")]
        if let (Some(d), false) = (&self.device, self.host_current) {
            return d.normals.is_some();
        }
        self.host.normals.is_some()
    }

    /// Whether the mesh has texture coordinates (on whichever side is current).
    pub fn has_uvs(&self) -> bool {
        #[cfg(feature = "cuda")]
        if let (Some(d), false) = (&self.device, self.host_current) {
            return d.uvs.is_some();
        }
        self.host.uvs.is_some()
    }

    /// Drops the normals (a pass moved the positions), on the side that is current.
    pub fn clear_normals(&mut self) {
        if self.host_current && self.host.normals.is_some() {
            self.host.to_mut().normals = None;
        }
        #[cfg(feature = "cuda")]
        if let (Some(d), true) = (self.device.as_mut(), self.device_current) {
            d.normals = None;
        }
    }

    /// Whether the device copy is current (the last pass ran on the GPU).
    pub fn on_device(&self) -> bool {
        self.device_current
    }

    /// The host mesh, read-only; downloaded first when the device copy is newer.
    pub fn host(&mut self) -> Result<&Mesh, GpuError> {
        #[cfg(feature = "cuda")]
        if !self.host_current {
            // the device is current whenever the host is not
            let gpu_err = || GpuError::Limit("the mesh is on no side".into());
            let d = self.device.as_ref().ok_or_else(gpu_err)?;
            let mut m = std::mem::take(&mut self.host).into_owned();
            let had = (m.colors.is_some(), m.tangents.is_some(), m.uvs1.is_some());
            download(d, &mut m)?;
            self.host = Cow::Owned(m);
            self.host_current = true;
            self.moves.push("downloaded to the host".into());
            for (had, has, what) in [
                (had.0, self.host.colors.is_some(), "vertex colours"),
                (had.1, self.host.tangents.is_some(), "tangents"),
                (
                    had.2,
                    self.host.uvs1.is_some(),
                    "second texture coordinates",
                ),
            ] {
                if had && !has {
                    self.moves.push(format!(
                        "{what} dropped (a GPU stage changed the vertices; it does not carry them)"
                    ));
                }
            }
        }
        Ok(&self.host)
    }

    /// The host mesh for changing: the device copy becomes stale.
    pub fn host_mut(&mut self) -> Result<&mut Mesh, GpuError> {
        self.host()?;
        self.patching = None;
        self.device_current = false;
        Ok(self.host.to_mut())
    }

    /// The device copy, read-only; uploaded first when the host copy is newer.
    #[cfg(feature = "cuda")]
    pub fn device(&mut self, gpu: &Gpu) -> Result<&DeviceAttributes, GpuError> {
        if !self.device_current {
            self.device = None;
            self.device = Some(DeviceAttributes::upload(gpu, &self.host)?);
            self.device_current = true;
            self.moves.push("uploaded to the device".into());
        }
        Ok(self.device.as_ref().expect("uploaded above"))
    }

    /// The device copy for changing: the host copy becomes stale.
    #[cfg(feature = "cuda")]
    pub fn device_mut(&mut self, gpu: &Gpu) -> Result<&mut DeviceAttributes, GpuError> {
        self.device(gpu)?;
        self.patching = None;
        self.host_current = false;
        Ok(self.device.as_mut().expect("uploaded above"))
    }

    /// Replaces the device copy (a pass that builds new arrays); the host copy becomes stale.
    #[cfg(feature = "cuda")]
    pub fn set_device(&mut self, d: DeviceAttributes) {
        self.patching = None;
        self.device = Some(d);
        self.device_current = true;
        self.host_current = false;
    }

    /// Takes the device copy when it is current (the host copy stays, stale), handing its
    /// buffers to the geometry stage without a copy.
    #[cfg(feature = "cuda")]
    pub fn take_device(&mut self) -> Option<DeviceAttributes> {
        if !self.device_current {
            return None;
        }
        self.device_current = false;
        self.device.take()
    }

    /// How many moves have happened so far (a pass's report names the ones it caused).
    pub fn move_count(&self) -> usize {
        self.moves.len()
    }

    /// The moves from `from` on.
    pub fn moves_since(&self, from: usize) -> Option<String> {
        let m = &self.moves[from.min(self.moves.len())..];
        (!m.is_empty()).then(|| m.join(", "))
    }

    /// The host mesh's index buffer, taken (moved out where the mesh is owned, copied where it
    /// is borrowed); the host mesh is left without triangles.
    pub fn take_indices(&mut self) -> Result<Vec<u32>, GpuError> {
        self.host()?;
        self.patching = None;
        self.device_current = false;
        Ok(match &mut self.host {
            Cow::Owned(m) => std::mem::take(&mut m.indices),
            Cow::Borrowed(m) => m.indices.clone(),
        })
    }

    /// The host mesh, taken (downloaded first when needed).
    pub fn into_host(mut self) -> Result<Mesh, GpuError> {
        self.host()?;
        Ok(self.host.into_owned())
    }
}

/// Downloads on the stream the buffers were made on.
#[cfg(feature = "cuda")]
fn download(d: &DeviceAttributes, m: &mut Mesh) -> Result<(), GpuError> {
    let stream = d.positions.stream().clone();
    let n = d.vertex_count;
    fn get<T: Copy + Default + cudarc::driver::DeviceRepr>(
        stream: &std::sync::Arc<cudarc::driver::CudaStream>,
        b: &cudarc::driver::CudaSlice<T>,
        len: usize,
    ) -> Result<Vec<T>, GpuError> {
        let mut out = vec![T::default(); len];
        if len > 0 {
            stream
                .memcpy_dtoh(&b.slice(0..len), &mut out)
                .ctx("downloading a mesh")?;
        }
        Ok(out)
    }
    let v3 = |f: Vec<f32>| -> Vec<glam::Vec3> { bytemuck::cast_slice(&f).to_vec() };
    m.positions = v3(get(&stream, &d.positions, 3 * n)?);
    m.normals = match &d.normals {
        Some(b) => Some(v3(get(&stream, b, 3 * n)?)),
        None => None,
    };
    m.uvs = match &d.uvs {
        Some(b) => Some(bytemuck::cast_slice(&get(&stream, b, 2 * n)?).to_vec()),
        None => None,
    };
    m.indices = get(&stream, &d.indices, d.index_count)?;
    // vertex colours, tangents and second uvs stay on the host (the GPU stages keep every vertex in place,
    // or they change the vertex count, and then these no longer belong to the vertices)
    if m.colors.as_ref().is_some_and(|c| c.len() != n) {
        m.colors = None;
    }
    if m.tangents.as_ref().is_some_and(|t| t.len() != n) {
        m.tangents = None;
    }
    if m.uvs1.as_ref().is_some_and(|t| t.len() != n) {
        m.uvs1 = None;
    }
    stream.synchronize().ctx("waiting for the GPU")
}
