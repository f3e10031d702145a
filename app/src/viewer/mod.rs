//! The window: winit, and a frame presented through wgpu (`pixels`) or a software surface
//! (app/src/viewer/present.rs). Orbit with the left mouse button, zoom with the wheel; keys switch
//! strategy (S), shading mode (M), vertex order (O) and culling (C); R resets the camera, P writes
//! a screenshot PNG into the current folder, V goes to the glTF file's next camera, Space pauses
//! and resumes the scene's animations (the arrow keys step them a frame back or on), Esc closes. Frame time and ASR (and the animation's time) are in the title.
//!
//! A frame is drawn only when something changed (input, a resize, a setting, a playing
//! animation): a still window costs no CPU.

mod present;

use glam::Vec3;
use present::Presenter;
use rxpipe::{CullMode, Error, Pipeline, Prepared, Scene};
use std::sync::Arc;
use std::time::Instant;
use winit::application::ApplicationHandler;
use winit::dpi::LogicalSize;
use winit::event::{ElementState, MouseButton, MouseScrollDelta, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::keyboard::{Key, NamedKey};
use winit::window::{Window, WindowId};

/// An orbit camera around the scene camera's target, about the camera's up axis
/// ([`rxpipe::scene::orbit_direction`]).
#[derive(Clone, Copy)]
struct Orbit {
    yaw: f32,
    pitch: f32,
    distance: f32,
    up: Vec3,
}

impl Orbit {
    fn from_camera(c: &rxpipe::Camera) -> Orbit {
        let d = c.eye - c.target;
        let (yaw, pitch) = rxpipe::scene::orbit_angles(c.up, d);
        Orbit {
            yaw,
            pitch,
            distance: d.length().max(1e-4),
            up: c.up,
        }
    }
    fn apply(&self, base: &rxpipe::Camera) -> rxpipe::Camera {
        let dir = rxpipe::scene::orbit_direction(self.up, self.yaw, self.pitch);
        let mut c = *base;
        c.eye = base.target + dir * self.distance;
        let scale = self.distance / (base.eye - base.target).length().max(1e-4);
        c.near = base.near * scale;
        c.far = base.far * scale;
        c
    }
}

/// How far an arrow key moves the animation: a frame at 30 frames a second.
const STEP: f32 = 1.0 / 30.0;

/// The time of the scene's animations in the window: it runs while playing, from 0 to the
/// animations' length and round again, and stands still while paused.
#[derive(Debug, Clone, Copy)]
struct Clock {
    /// seconds into the animations
    t: f32,
    /// their length (0: nothing to play)
    length: f32,
    playing: bool,
    /// when it last advanced (`None`: not since it started or resumed)
    last: Option<Instant>,
}

impl Clock {
    /// A clock over animations `length` seconds long, playing when there is something to play.
    fn new(length: f32) -> Clock {
        let length = if length.is_finite() {
            length.max(0.0)
        } else {
            0.0
        };
        Clock {
            t: 0.0,
            length,
            playing: length > 0.0,
            last: None,
        }
    }

    /// Advances to `now`; true while it plays (a new frame is due).
    fn tick(&mut self, now: Instant) -> bool {
        if !self.playing {
            return false;
        }
        if let Some(last) = self.last {
            let dt = now.saturating_duration_since(last).as_secs_f32();
            self.t = (self.t + dt) % self.length;
        }
        self.last = Some(now);
        true
    }

    /// Moves it by `dt` seconds (either way, round the length), pausing it: the arrow keys step
    /// through the animation a frame at a time.
    fn step(&mut self, dt: f32) {
        if self.length > 0.0 {
            self.t = (self.t + dt).rem_euclid(self.length);
            self.playing = false;
            self.last = None;
        }
    }

    /// Pauses or resumes (resuming where it stood).
    fn toggle(&mut self) {
        self.playing = !self.playing && self.length > 0.0;
        self.last = None;
    }
}

struct App {
    scene: Scene,
    pipeline: Pipeline,
    prepared: Option<Prepared>,
    window: Option<Arc<Window>>,
    presenter: Option<Presenter>,
    size: (u32, u32),
    orbit: Orbit,
    home: Orbit,
    dragging: bool,
    last_cursor: Option<(f64, f64)>,
    clock: Clock,
    /// the time the skinned meshes were last posed at
    posed_at: Option<f32>,
    /// which of the scene's cameras the view started from (V goes to the next)
    view: usize,
    error: Option<Error>,
    frames: FrameLoop,
    /// something changed since the last frame was rendered
    dirty: bool,
    /// the notes of the last frame that printed any (printed again only when they change, not
    /// with every frame of a drag)
    noted: Vec<String>,
}

impl App {
    fn fail(&mut self, el: &ActiveEventLoop, e: Error) {
        self.error = Some(e);
        el.exit();
    }

    fn redraw(&mut self, el: &ActiveEventLoop) {
        let (w, h) = self.size;
        if w == 0 || h == 0 {
            return;
        }
        if self
            .prepared
            .as_ref()
            .is_none_or(|p| !self.pipeline.is_prepared_for(p))
        {
            match self.pipeline.prepare(&self.scene) {
                Ok(p) => {
                    for l in crate::noted(&p.reindex_notes(), "") {
                        eprintln!("{l}");
                    }
                    self.prepared = Some(p)
                }
                Err(e) => return self.fail(el, e),
            }
        }
        let camera = self.orbit.apply(&self.scene.camera);
        // a playing animation makes every frame new
        if self.clock.tick(Instant::now()) {
            self.dirty = true;
        }
        let t = self.clock.t;
        // skinned meshes posed at the new time on the host, and prepared again
        if self.posed_at != Some(t) && !self.scene.animation.deformed.is_empty() {
            let posed = self.scene.pose_meshes(t);
            let prepared = self.prepared.as_mut().expect("prepared above");
            if let Err(e) = self.pipeline.prepare_again(prepared, &self.scene, &posed) {
                return self.fail(el, e);
            }
            self.posed_at = Some(t);
            self.dirty = true;
        }
        let mut none: [u8; 0] = [];
        let target = match self.presenter.as_mut() {
            Some(px) => px.frame_mut(),
            None => &mut none[..],
        };
        let job = std::mem::take(&mut self.dirty).then(|| FrameJob {
            pipeline: &self.pipeline,
            prepared: self.prepared.as_ref().expect("prepared above"),
            scene: &self.scene,
            camera: &camera,
            size: (w, h),
            time: t,
        });
        let rendered = job.is_some();
        let waiting = match self.frames.draw(job, target) {
            Ok(w) => w,
            Err(e) => return self.fail(el, e),
        };
        let frame = self.frames.latest();
        if rendered && frame.notes != self.noted {
            for l in crate::noted(&frame.notes, "") {
                eprintln!("{l}");
            }
            self.noted = frame.notes.clone();
        }
        if let (Some(px), Some(win)) = (self.presenter.as_mut(), self.window.as_ref()) {
            if let Err(e) = px.present() {
                return self.fail(el, e);
            }
            let s = &frame.stats;
            let cameras = match self.scene.cameras.len() {
                0 | 1 => String::new(),
                n => format!(" | camera {}/{n} (V)", self.view + 1),
            };
            let clock = match (self.clock.length > 0.0, self.clock.playing) {
                (false, _) => String::new(),
                (true, true) => format!(" | t {:.2} s (Space)", self.clock.t),
                (true, false) => format!(" | t {:.2} s, paused (Space)", self.clock.t),
            };
            win.set_title(&format!(
                "rxpipe | {} | strategy {} (S) | order {} (O) | {} (M) | cull {:?} (C) | {:.1} ms | ASR {:.3}{cameras}{clock}",
                self.scene.name,
                self.pipeline.strategy,
                self.pipeline.order,
                self.pipeline.shading.name(),
                self.pipeline.cull,
                s.total_ms,
                s.geometry.asr()
            ));
            if waiting || self.clock.playing {
                // the frame just rendered reaches the window on the next redraw; a playing
                // animation asks for the next frame
                win.request_redraw();
            }
        }
    }
}

/// The viewer's frames without the window, double-buffered: a new frame renders into one
/// [`rxpipe::Frame`] while a second thread copies the frame rendered before it into the window's
/// buffer, so that copy (8 MB at 1920x1080) overlaps the next frame's work (on the GPU: its
/// geometry, raster and colour download). The window therefore shows each frame one redraw after
/// it was rendered, and asks for one more redraw when no new frame follows (see
/// [`FrameLoop::draw`]). `bench frame` times this same code headless (its 'window frame' column).
pub struct FrameLoop {
    frames: [rxpipe::Frame; 2],
    /// the frame rendered last
    last: usize,
    /// whether it has not yet gone to the window's buffer
    pending: bool,
}

impl Default for FrameLoop {
    fn default() -> Self {
        FrameLoop {
            frames: [rxpipe::Frame::empty(), rxpipe::Frame::empty()],
            last: 0,
            pending: false,
        }
    }
}

/// Threads that copy a rendered frame into the window's buffer beside the next frame's work.
const COPY_THREADS: usize = 4;

/// What a new frame renders.
pub struct FrameJob<'a> {
    pub pipeline: &'a Pipeline,
    pub prepared: &'a Prepared,
    pub scene: &'a Scene,
    pub camera: &'a rxpipe::Camera,
    pub size: (u32, u32),
    pub time: f32,
}

impl FrameLoop {
    /// One window frame: with `job`, renders a new frame while the last rendered one (if it has
    /// not gone yet) is copied into `target`; without, only copies the last rendered frame. A
    /// frame whose size differs from `target`'s is not copied. Returns whether a rendered frame
    /// still waits to be copied (the window then asks for another redraw).
    pub fn draw(&mut self, job: Option<FrameJob>, target: &mut [u8]) -> Result<bool, Error> {
        let Some(j) = job else {
            if self.pending {
                copy_if_sized(&self.frames[self.last].color, target);
                self.pending = false;
            }
            return Ok(false);
        };
        let next = 1 - self.last;
        let [a, b] = &mut self.frames;
        let (shown, new) = if next == 1 { (&*a, b) } else { (&*b, a) };
        let mut render = || {
            j.pipeline
                .render_into(j.prepared, j.scene, j.camera, j.size, j.time, new)
        };
        if self.pending {
            let color = &shown.color;
            std::thread::scope(|s| {
                // (in a few threads of its own: one thread copies about 10 GB/s, slower than a
                // GPU frame of 1920x1080, and the thread pool is the frame's)
                if target.len() == color.len() {
                    let part = color.len().div_ceil(COPY_THREADS).next_multiple_of(4);
                    for (t, c) in target.chunks_mut(part).zip(color.chunks(part)) {
                        s.spawn(move || t.copy_from_slice(c));
                    }
                }
                render()
            })?;
        } else {
            render()?;
        }
        self.last = next;
        self.pending = true;
        Ok(true)
    }

    /// The frame rendered last (whether or not it has reached the window yet).
    pub fn latest(&self) -> &rxpipe::Frame {
        &self.frames[self.last]
    }
}

/// Copies a frame's colour into the window's buffer when their sizes agree.
fn copy_if_sized(color: &[u8], target: &mut [u8]) {
    if target.len() == color.len() {
        target.copy_from_slice(color);
    }
}

impl ApplicationHandler for App {
    fn resumed(&mut self, el: &ActiveEventLoop) {
        if self.window.is_some() {
            return;
        }
        let attrs = Window::default_attributes()
            .with_title("rxpipe")
            .with_inner_size(LogicalSize::new(1280.0, 720.0));
        let window = match el.create_window(attrs) {
            Ok(w) => Arc::new(w),
            Err(e) => return self.fail(el, Error::Backend(format!("cannot open a window: {e}"))),
        };
        let size = window.inner_size();
        let (w, h) = (size.width.max(1), size.height.max(1));
        match Presenter::new(window.clone(), w, h) {
            Ok((p, what)) => {
                eprintln!("{what}");
                self.presenter = Some(p);
            }
            Err(e) => return self.fail(el, e),
        }
        self.size = (w, h);
        self.dirty = true;
        window.request_redraw();
        self.window = Some(window);
    }

    fn window_event(&mut self, el: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        if self.handle(el, event) {
            self.dirty = true;
            if let Some(w) = &self.window {
                w.request_redraw();
            }
        }
    }
}

impl App {
    /// Applies one window event; true when the picture changes (a redraw is due).
    fn handle(&mut self, el: &ActiveEventLoop, event: WindowEvent) -> bool {
        match event {
            WindowEvent::CloseRequested => el.exit(),
            WindowEvent::Resized(size) => {
                let (w, h) = (size.width, size.height);
                if w > 0 && h > 0 {
                    if let Some(px) = self.presenter.as_mut() {
                        if let Err(e) = px.resize(w, h) {
                            self.fail(el, e);
                            return false;
                        }
                    }
                }
                self.size = (w, h);
                return true;
            }
            WindowEvent::RedrawRequested => self.redraw(el),
            WindowEvent::MouseInput {
                state,
                button: MouseButton::Left,
                ..
            } => {
                self.dragging = state == ElementState::Pressed;
            }
            WindowEvent::CursorMoved { position, .. } => {
                let moved = if let (true, Some((x, y))) = (self.dragging, self.last_cursor) {
                    self.orbit.yaw -= (position.x - x) as f32 * 0.008;
                    self.orbit.pitch =
                        (self.orbit.pitch + (position.y - y) as f32 * 0.008).clamp(-1.5, 1.5);
                    true
                } else {
                    false
                };
                self.last_cursor = Some((position.x, position.y));
                return moved;
            }
            WindowEvent::MouseWheel { delta, .. } => {
                let d = match delta {
                    MouseScrollDelta::LineDelta(_, y) => y,
                    MouseScrollDelta::PixelDelta(p) => p.y as f32 / 40.0,
                };
                self.orbit.distance =
                    (self.orbit.distance * (1.0 - 0.1 * d)).max(self.home.distance * 0.05);
                return true;
            }
            WindowEvent::KeyboardInput { event, .. } if event.state == ElementState::Pressed => {
                match event.logical_key.as_ref() {
                    Key::Named(NamedKey::Escape) => el.exit(),
                    Key::Named(NamedKey::Space) => self.clock.toggle(),
                    Key::Named(NamedKey::ArrowRight) => self.clock.step(STEP),
                    Key::Named(NamedKey::ArrowLeft) => self.clock.step(-STEP),
                    Key::Character(c) => match c.to_ascii_lowercase().as_str() {
                        "s" => {
                            self.pipeline.strategy = self.pipeline.strategy.next();
                            // the patch strategy shades the patches of the patch order
                            if self.pipeline.strategy == rxpipe::Strategy::Patch
                                && !matches!(self.pipeline.order, rxpipe::VertexOrder::Patch(_))
                            {
                                self.pipeline.order = rxpipe::VertexOrder::Patch(
                                    rxpipe::geometry::order::PATCH_FACES,
                                );
                            }
                        }
                        "m" => self.pipeline.shading = self.pipeline.shading.next(),
                        "o" => {
                            self.pipeline.order = self.pipeline.order.next();
                            // leaving the patch order leaves the patch strategy too
                            if self.pipeline.strategy == rxpipe::Strategy::Patch
                                && !matches!(self.pipeline.order, rxpipe::VertexOrder::Patch(_))
                            {
                                self.pipeline.strategy = self.pipeline.strategy.next();
                            }
                        }
                        "c" => {
                            self.pipeline.cull = match self.pipeline.cull {
                                CullMode::Back => CullMode::None,
                                _ => CullMode::Back,
                            }
                        }
                        "r" => self.orbit = self.home,
                        "v" if self.scene.cameras.len() > 1 => {
                            self.view = (self.view + 1) % self.scene.cameras.len();
                            self.scene.camera = self.scene.cameras[self.view];
                            self.home = Orbit::from_camera(&self.scene.camera);
                            self.orbit = self.home;
                        }
                        "p" => {
                            self.screenshot();
                            return false;
                        }
                        _ => return false,
                    },
                    _ => return false,
                }
                return true;
            }
            _ => {}
        }
        false
    }

    /// Writes the latest frame as rxpipe-screenshot-N.png in the current folder, N the first
    /// number not taken (an existing file is never replaced), and says where.
    fn screenshot(&self) {
        let f = self.frames.latest();
        if f.width == 0 {
            return;
        }
        let Some(path) = (1..10_000)
            .map(|n| std::path::PathBuf::from(format!("rxpipe-screenshot-{n}.png")))
            .find(|p| !p.exists())
        else {
            eprintln!("screenshot: rxpipe-screenshot-1.png to -9999.png all exist; none written");
            return;
        };
        match f.save_png(&path) {
            Ok(()) => eprintln!("screenshot: {} ({}x{})", path.display(), f.width, f.height),
            Err(e) => eprintln!("screenshot: {e}"),
        }
    }
}

/// Opens the window and renders until it is closed. With no display, returns an error that
/// points to `rxpipe render`.
pub fn run(scene: Scene, mut pipeline: Pipeline) -> Result<(), Error> {
    // a window shows colour only: the GPU's depth stays on the GPU
    pipeline.color_only = true;
    let event_loop = EventLoop::new().map_err(|e| {
        Error::Backend(format!(
            "no display available ({e}); render to a file instead: rxpipe render SCENE --out frame.png"
        ))
    })?;
    // sleep until an event comes: frames are drawn on request, when something changed
    event_loop.set_control_flow(ControlFlow::Wait);
    let orbit = Orbit::from_camera(&scene.camera);
    let clock = Clock::new(match scene.animation.is_empty() {
        true => 0.0,
        false => scene.animation.duration(),
    });
    let mut app = App {
        scene,
        pipeline,
        prepared: None,
        window: None,
        presenter: None,
        size: (0, 0),
        orbit,
        home: orbit,
        dragging: false,
        last_cursor: None,
        clock,
        posed_at: None,
        view: 0,
        error: None,
        frames: FrameLoop::default(),
        dirty: true,
        noted: Vec::new(),
    };
    event_loop
        .run_app(&mut app)
        .map_err(|e| Error::Backend(format!("window event loop: {e}")))?;
    match app.error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_clock_plays_loops_and_pauses() {
        let start = Instant::now();
        let at = |s: f32| start + Duration::from_secs_f32(s);
        let mut c = Clock::new(2.0);
        assert!(c.playing);
        // the first tick starts it; later ones advance it, round the length
        assert!(c.tick(at(10.0)) && c.t == 0.0);
        assert!(c.tick(at(11.5)) && (c.t - 1.5).abs() < 1e-5);
        assert!(c.tick(at(12.0)) && c.t.abs() < 1e-5);
        assert!(c.tick(at(12.25)) && (c.t - 0.25).abs() < 1e-5);
        // paused, it stands; resumed, it goes on from there, not from the wall clock
        c.toggle();
        assert!(!c.tick(at(20.0)) && (c.t - 0.25).abs() < 1e-5);
        c.toggle();
        assert!(c.tick(at(30.0)) && (c.t - 0.25).abs() < 1e-5);
        assert!(c.tick(at(30.5)) && (c.t - 0.75).abs() < 1e-5);
        // an arrow key steps it a frame and pauses it, round the length either way
        c.step(STEP);
        assert!(!c.playing && (c.t - (0.75 + STEP)).abs() < 1e-5);
        c.step(-1.0);
        assert!((c.t - (1.75 + STEP)).abs() < 1e-5);
        assert!(!c.tick(at(40.0)));
        // nothing to play: never runs, and Space does not start it
        let mut still = Clock::new(0.0);
        assert!(!still.tick(at(1.0)));
        still.toggle();
        still.step(STEP);
        assert!(!still.playing && !still.tick(at(2.0)) && still.t == 0.0);
        assert!(!Clock::new(f32::NAN).playing);
    }
}
