pub mod mlp;
pub mod twin;
