//! Sort-last rendering: one frame drawn as several parts, each a share of the frame's triangles
//! in its own colour and depth (on a GPU of its own, or in turn on one device), then composited
//! by depth into the frame one part alone would have drawn.
//!
//! The parts are contiguous runs of the frame's submission order (objects in order, each
//! object's triangles in order), balanced by the triangles each draws after the frame stages
//! ([`partition`]). That makes compositing exact with colour and depth alone ([`composite`]): a
//! single frame keeps at each pixel the nearest fragment, and of fragments at the same depth
//! the one submitted first; each part keeps its own nearest and first, and the composite takes
//! the nearest of those, a tie going to the earlier part, whose triangles all come first.

pub mod balance;
pub mod composite;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod partition;
