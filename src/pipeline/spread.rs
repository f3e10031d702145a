//! One frame over several GPUs: sort-last rendering across devices ([`crate::sortlast`]).
//!
//! Each GPU (a rank, in the renderer's order) holds the whole prepared scene and draws its share
//! of the frame's opaque triangles into its own colour and depth, which stay on the device; the
//! shares are composited there (through NCCL over distinct devices, or on the one device when
//! every rank is on the same GPU), rank 0 downloads the composite and draws the blended objects
//! over it. The shares follow the ranks' measured times from frame to frame ([`Balance`]), so
//! that a view that piles the work onto one rank is re-balanced within a few frames.

use super::frame::Frame;
use super::prepared::Prepared;
use super::render::{Staged, View};
use super::Pipeline;
use crate::backend::Renderer;
use crate::error::Error;
use crate::sortlast::balance::Balance;
use rxpipe_core::scene::{Camera, Scene};

/// The state of a pipeline's frames over several GPUs: the ranks' shares and the composite,
/// made at the first such frame.
pub(super) struct Spread {
    balance: Balance,
    /// every rank is on one device (composited there, not through NCCL)
    #[cfg(feature = "cuda")]
    one_device: bool,
    #[cfg(feature = "cuda")]
    composite: Option<Composite>,
}

/// Where a frame's shares are composited.
#[cfg(feature = "cuda")]
enum Composite {
    /// over distinct GPUs, through NCCL (rank `r` on GPU `r`)
    Nccl(crate::sortlast::cuda::NcclComposite),
    /// every rank on one GPU: the shares composited there
    Device(crate::sortlast::cuda::DeviceComposite),
}

impl Spread {
    /// The state for `renderer`'s GPUs: even shares to start with. Its GPUs must be distinct
    /// devices, or all one device (for sort-last on one GPU); a mix is an error.
    pub(super) fn new(renderer: &Renderer) -> Result<Spread, Error> {
        let ordinals = renderer.ordinals();
        let distinct = {
            let mut o = ordinals.clone();
            o.sort_unstable();
            o.dedup();
            o.len()
        };
        if distinct != ordinals.len() && distinct != 1 {
            return Err(Error::Backend(format!(
                "GPUs {ordinals:?}: a frame is spread over distinct GPUs, or drawn in shares on one; a list that names some GPUs more than once is neither"
            )));
        }
        Ok(Spread {
            balance: Balance::new(ordinals.len().max(1)),
            #[cfg(feature = "cuda")]
            one_device: distinct <= 1,
            #[cfg(feature = "cuda")]
            composite: None,
        })
    }
}

impl Pipeline {
    /// The GPUs (ranks) each frame is spread over: 1 on one device or the CPU.
    pub fn ranks(&self) -> usize {
        1 + self.peers.len()
    }

    /// The ranks' current shares of a frame's opaque triangles (they sum to 1).
    pub fn rank_shares(&self) -> Vec<f64> {
        self.spread().balance.shares().to_vec()
    }

    fn spread(&self) -> std::sync::MutexGuard<'_, Spread> {
        self.spread.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// [`Pipeline::render_into`] over every rank: a share each, composited; the shares then
    /// follow the ranks' times.
    pub(super) fn render_spread(
        &self,
        prepared: &Prepared,
        scene: &Scene,
        camera: &Camera,
        size: (u32, u32),
        time: f32,
        frame: &mut Frame,
    ) -> Result<(), Error> {
        let shares = self.rank_shares();
        *frame = self.render_shares(prepared, scene, camera, size, time, &shares)?;
        if let Some(p) = &frame.stats.parts {
            self.spread().balance.update(&p.part_ms);
        }
        Ok(())
    }

    /// The ranks' shares of a frame (`staged`: one share a rank) drawn on their GPUs at once
    /// (ranks on one device in turn) and composited into `frame`'s colour and depth; returns
    /// the shares' frames (statistics only: their pictures stayed on the devices) and the
    /// composite's host wall time in ms.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn draw_spread(
        &self,
        prepared: &Prepared,
        scene: &Scene,
        camera: &Camera,
        size: (u32, u32),
        time: f32,
        staged: &Staged,
        frame: &mut Frame,
    ) -> Result<(Vec<Frame>, f64), Error> {
        let ranks = self.ranks();
        if staged.shares.len() != ranks {
            return Err(Error::Backend(format!(
                "{} parts asked of a pipeline that draws on {ranks} GPUs: it draws one part a GPU",
                staged.shares.len()
            )));
        }
        // the ranks grouped by device, each group drawn in turn on a thread of its own
        let ordinals = self.renderer.ordinals();
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for r in 0..ranks {
            match groups.iter_mut().find(|g| ordinals[g[0]] == ordinals[r]) {
                Some(g) => g.push(r),
                None => groups.push(vec![r]),
            }
        }
        let draw = |r: usize| -> Result<Frame, Error> {
            let mut f = Frame::empty();
            let view = View {
                share: super::render::Share::Part(r, staged),
                on_device: true,
                ..View::whole(camera, size, time)
            };
            self.render_rank(r, prepared, scene, view, &mut f)?;
            Ok(f)
        };
        let results: Vec<Result<Vec<(usize, Frame)>, Error>> = std::thread::scope(|s| {
            let threads: Vec<_> = groups
                .iter()
                .map(|g| s.spawn(|| g.iter().map(|&r| Ok((r, draw(r)?))).collect()))
                .collect();
            threads
                .into_iter()
                .map(|t| {
                    t.join().unwrap_or_else(|_| {
                        Err(Error::Backend("a GPU's share of the frame panicked".into()))
                    })
                })
                .collect()
        });
        // (in rank order: every rank is in one group)
        let mut drawn: Vec<(usize, Frame)> = Vec::with_capacity(ranks);
        for g in results {
            drawn.extend(g?);
        }
        drawn.sort_by_key(|(r, _)| *r);
        let drawn: Vec<Frame> = drawn.into_iter().map(|(_, f)| f).collect();
        let composite_ms = self.composite_ranks(size, frame)?;
        Ok((drawn, composite_ms))
    }

    /// The ranks' shares, each left on its GPU by its rasteriser, composited into `frame`'s
    /// colour and depth; returns the host wall time of the composite (enqueued and waited
    /// for), in ms.
    #[cfg(feature = "cuda")]
    fn composite_ranks(
        &self,
        (width, height): (u32, u32),
        frame: &mut Frame,
    ) -> Result<f64, Error> {
        use crate::sortlast::cuda::{DeviceComposite, DevicePart, NcclComposite};
        let apis: Vec<&crate::backend::cuda::CudaApi> = std::iter::once(&self.engine)
            .chain(&self.peers)
            .map(|e| match e {
                super::Engine::Cuda(api) => Ok(&**api),
                super::Engine::Cpu(_) => Err(Error::Backend(
                    "a frame over several GPUs is drawn on the CUDA backend".into(),
                )),
            })
            .collect::<Result<_, _>>()?;
        let rasters: Vec<_> = apis.iter().map(|a| a.rasteriser()).collect();
        let parts: Vec<DevicePart> = rasters.iter().map(|r| r.frame_buffers()).collect();
        let pixels = width as usize * height as usize;
        let gpus = self.renderer.gpus();
        let mut spread = self.spread();
        let t = std::time::Instant::now();
        let one_device = spread.one_device;
        let composite = match &mut spread.composite {
            Some(c) => c,
            slot => slot.insert(match one_device {
                true => Composite::Device(DeviceComposite::new(&gpus[0])?),
                false => Composite::Nccl(NcclComposite::new(gpus)?),
            }),
        };
        let ms = match composite {
            Composite::Nccl(c) => {
                c.parts(&parts, pixels)?;
                c.sync()?;
                let ms = t.elapsed().as_secs_f64() * 1e3;
                c.rank(0).download(&mut frame.color, &mut frame.depth)?;
                ms
            }
            Composite::Device(c) => {
                c.parts(&parts, pixels)?;
                gpus[0].sync()?;
                let ms = t.elapsed().as_secs_f64() * 1e3;
                c.download(&mut frame.color, &mut frame.depth)?;
                ms
            }
        };
        Ok(ms)
    }

    #[cfg(not(feature = "cuda"))]
    fn composite_ranks(&self, _: (u32, u32), _: &mut Frame) -> Result<f64, Error> {
        Err(Error::Backend(format!(
            "a frame over several GPUs: {}",
            crate::gpu::UNAVAILABLE
        )))
    }
}
