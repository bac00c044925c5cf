//! Neural-network building blocks with ONNX semantics: convolution, pooling, activations,
//! normalizations and layout shuffles (the `shp_tensor_conv` ... `shp_tensor_space_to_depth`
//! section of shapepoly.h). They are composites recorded through the trace, so programs using
//! them serialize, differentiate and fuse like any other.
use std::ptr;

use crate::error::Result;
use crate::scope::Dim;
use crate::sys;
use crate::tensor::{ReduceOp, Tensor};
use crate::util::invalid;

/// ONNX/PyTorch-style auto padding for conv and pooling (`shp_auto_pad_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum AutoPad {
    /// Use the explicit pads (the default).
    #[default]
    NotSet,
    /// `out = ceil(in / stride)`; the extra pad goes at the end.
    SameUpper,
    /// `out = ceil(in / stride)`; the extra pad goes at the beginning.
    SameLower,
    /// No padding.
    Valid,
}

impl AutoPad {
    /// The raw C enum value.
    pub fn raw(self) -> sys::shp_auto_pad_t {
        match self {
            AutoPad::NotSet => sys::SHP_AUTO_PAD_NOTSET,
            AutoPad::SameUpper => sys::SHP_AUTO_PAD_SAME_UPPER,
            AutoPad::SameLower => sys::SHP_AUTO_PAD_SAME_LOWER,
            AutoPad::Valid => sys::SHP_AUTO_PAD_VALID,
        }
    }
}

/// Padding modes of [`Tensor::pad_mode`] (`shp_pad_mode_t`; numpy.pad's and ONNX Pad's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PadMode {
    /// Fill with a value.
    #[default]
    Constant,
    /// Mirror without repeating the edge element.
    Reflect,
    /// Repeat the edge element.
    Edge,
}

impl PadMode {
    /// The raw C enum value.
    pub fn raw(self) -> sys::shp_pad_mode_t {
        match self {
            PadMode::Constant => sys::SHP_PAD_CONSTANT,
            PadMode::Reflect => sys::SHP_PAD_REFLECT,
            PadMode::Edge => sys::SHP_PAD_EDGE,
        }
    }
}

/// Channel orders of [`Tensor::depth_to_space`] (`shp_depth_to_space_mode_t`, ONNX's modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum DepthToSpaceMode {
    /// Depth-column-row (ONNX's default).
    #[default]
    Dcr,
    /// Column-row-depth (PyTorch's pixel_shuffle).
    Crd,
}

impl DepthToSpaceMode {
    /// The raw C enum value.
    pub fn raw(self) -> sys::shp_depth_to_space_mode_t {
        match self {
            DepthToSpaceMode::Dcr => sys::SHP_DEPTH_TO_SPACE_DCR,
            DepthToSpaceMode::Crd => sys::SHP_DEPTH_TO_SPACE_CRD,
        }
    }
}

/// Arguments of [`Tensor::conv`] and [`Tensor::conv_transpose`]. An empty slice means the
/// default (strides and dilations all 1, pads all 0, output_padding all 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConvOptions<'a> {
    /// One entry >= 1 per spatial axis.
    pub strides: &'a [i64],
    /// One entry >= 1 per spatial axis.
    pub dilations: &'a [i64],
    /// Two entries per spatial axis: the beginnings, then the ends (ONNX order); only with
    /// [`AutoPad::NotSet`].
    pub pads: &'a [i64],
    /// conv_transpose only: one entry per spatial axis, each >= 0 and smaller than the stride
    /// or the dilation.
    pub output_padding: &'a [i64],
    /// Auto padding (default [`AutoPad::NotSet`]).
    pub auto_pad: AutoPad,
    /// >= 1, dividing the input and output channels (default 1; depthwise: the channels).
    pub groups: i64,
}

impl Default for ConvOptions<'_> {
    fn default() -> Self {
        ConvOptions {
            strides: &[],
            dilations: &[],
            pads: &[],
            output_padding: &[],
            auto_pad: AutoPad::NotSet,
            groups: 1,
        }
    }
}

/// Arguments of [`Tensor::max_pool`] and [`Tensor::avg_pool`] besides the kernel shape. An
/// empty slice means the default (strides and dilations all 1, pads all 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PoolOptions<'a> {
    /// One entry >= 1 per spatial axis.
    pub strides: &'a [i64],
    /// One entry >= 1 per spatial axis.
    pub dilations: &'a [i64],
    /// Two entries per spatial axis, the beginnings then the ends, each >= 0 and smaller than
    /// the kernel extent; only with [`AutoPad::NotSet`].
    pub pads: &'a [i64],
    /// Auto padding (default [`AutoPad::NotSet`]).
    pub auto_pad: AutoPad,
    /// Round the output size up (PyTorch's / ONNX's ceil_mode).
    pub ceil_mode: bool,
    /// avg_pool only: divide by the window size including the padding.
    pub count_include_pad: bool,
}

/// Arguments of [`Tensor::reduce_window`] besides the op and the window. An empty slice means
/// the default (strides and dilations all 1, pads all 0).
#[derive(Debug, Clone, Copy, Default)]
pub struct ReduceWindowOptions<'a, 's> {
    /// One entry >= 1 per axis.
    pub strides: &'a [i64],
    /// One entry >= 1 per axis: the gap between the window's positions.
    pub window_dilation: &'a [i64],
    /// One entry >= 1 per axis: `base_dilation - 1` holes between neighbouring elements.
    pub base_dilation: &'a [i64],
    /// One dim per axis (any sign: negative crops), padded before.
    pub pad_low: &'a [Dim<'s>],
    /// One dim per axis (any sign: negative crops), padded after.
    pub pad_high: &'a [Dim<'s>],
}

/// NULL for an empty slice (the C default), else the slice, which must have `n` entries; the
/// error names the op, the argument and both counts.
fn opt_array(op: &str, what: &str, values: &[i64], n: usize, unit: &str) -> Result<*const i64> {
    if values.is_empty() {
        Ok(ptr::null())
    } else if values.len() != n {
        Err(invalid(format!(
            "{}: {} has {} entries, expected {} ({}) or none",
            op,
            what,
            values.len(),
            n,
            unit
        )))
    } else {
        Ok(values.as_ptr())
    }
}

fn opt_dims(
    op: &str,
    what: &str,
    dims: &[Dim<'_>],
    n: usize,
) -> Result<Vec<*const sys::shp_dim_t>> {
    if !dims.is_empty() && dims.len() != n {
        return Err(invalid(format!(
            "{}: {} has {} dims, expected {} (one per axis) or none",
            op,
            what,
            dims.len(),
            n
        )));
    }
    Ok(dims.iter().map(|d| d.raw()).collect())
}

fn ptr_or_null<T>(v: &[T]) -> *const T {
    if v.is_empty() {
        ptr::null()
    } else {
        v.as_ptr()
    }
}

/// The number of spatial axes of a conv input x [N, C, *spatial] (1 to 3).
fn spatial_axes(op: &str, x: Tensor<'_>) -> Result<usize> {
    let rank = x.rank()?;
    if !(3..=5).contains(&rank) {
        return Err(invalid(format!(
            "{}: x has rank {}, expected [N, C, *spatial] with 1 to 3 spatial axes (rank 3 to 5)",
            op, rank
        )));
    }
    Ok(rank - 2)
}

impl<'s> Tensor<'s> {
    /// ONNX LeakyRelu: `x >= 0 ? x : alpha * x` (alpha finite) (`shp_tensor_leaky_relu`).
    pub fn leaky_relu(self, alpha: f64) -> Result<Tensor<'s>> {
        // SAFETY: the tensor is alive.
        self.op(|out| unsafe { sys::shp_tensor_leaky_relu(self.raw(), alpha, out) })
    }

    /// ONNX PRelu: `x >= 0 ? x : slope * x`, `slope` broadcasting to this tensor's shape
    /// (never the reverse) (`shp_tensor_prelu`).
    pub fn prelu(self, slope: Tensor<'s>) -> Result<Tensor<'s>> {
        // SAFETY: both tensors are alive.
        self.op(|out| unsafe { sys::shp_tensor_prelu(self.raw(), slope.raw(), out) })
    }

    /// ONNX Elu: `x >= 0 ? x : alpha * (e^x - 1)` (alpha finite) (`shp_tensor_elu`).
    pub fn elu(self, alpha: f64) -> Result<Tensor<'s>> {
        // SAFETY: the tensor is alive.
        self.op(|out| unsafe { sys::shp_tensor_elu(self.raw(), alpha, out) })
    }

    /// ONNX Selu: `gamma * (x > 0 ? x : alpha * (e^x - 1))`; ONNX's defaults are
    /// alpha = 1.67326319217681884765625, gamma = 1.05070102214813232421875
    /// (`shp_tensor_selu`).
    pub fn selu(self, alpha: f64, gamma: f64) -> Result<Tensor<'s>> {
        // SAFETY: the tensor is alive.
        self.op(|out| unsafe { sys::shp_tensor_selu(self.raw(), alpha, gamma, out) })
    }

    /// ONNX Softplus, `log(1 + e^x)` in a stable form (`shp_tensor_softplus`).
    pub fn softplus(self) -> Result<Tensor<'s>> {
        // SAFETY: the tensor is alive.
        self.op(|out| unsafe { sys::shp_tensor_softplus(self.raw(), out) })
    }

    /// ONNX Softsign: `x / (1 + |x|)` (`shp_tensor_softsign`).
    pub fn softsign(self) -> Result<Tensor<'s>> {
        // SAFETY: the tensor is alive.
        self.op(|out| unsafe { sys::shp_tensor_softsign(self.raw(), out) })
    }

    /// ONNX Clip: `min(max(x, min), max)` for every numeric dtype; infinities mean no bound,
    /// NaN bounds are errors; integer tensors round the bounds inward (`shp_tensor_clip`).
    pub fn clip(self, min: f64, max: f64) -> Result<Tensor<'s>> {
        // SAFETY: the tensor is alive.
        self.op(|out| unsafe { sys::shp_tensor_clip(self.raw(), min, max, out) })
    }

    /// ONNX HardSigmoid: `max(0, min(1, alpha * x + beta))`; ONNX's defaults are 0.2, 0.5
    /// (`shp_tensor_hard_sigmoid`).
    pub fn hard_sigmoid(self, alpha: f64, beta: f64) -> Result<Tensor<'s>> {
        // SAFETY: the tensor is alive.
        self.op(|out| unsafe { sys::shp_tensor_hard_sigmoid(self.raw(), alpha, beta, out) })
    }

    /// ONNX LogSoftmax along `axis` (negative counts from the end), in the stable form
    /// `x - max - log(sum(e^(x - max)))` (`shp_tensor_log_softmax`).
    pub fn log_softmax(self, axis: i64) -> Result<Tensor<'s>> {
        // SAFETY: the tensor is alive.
        self.op(|out| unsafe { sys::shp_tensor_log_softmax(self.raw(), axis, out) })
    }

    /// ONNX BatchNormalization, inference form, on this tensor `[N, C, ...]`: `scale`, `bias`,
    /// `mean` and `var` are each `[C]`; `x * a + b` with `a = scale / sqrt(var + epsilon)`,
    /// `b = bias - mean * a` (`shp_tensor_batch_norm`).
    pub fn batch_norm(
        self,
        scale: Tensor<'s>,
        bias: Tensor<'s>,
        mean: Tensor<'s>,
        var: Tensor<'s>,
        epsilon: f64,
    ) -> Result<Tensor<'s>> {
        // SAFETY: the five tensors are alive.
        self.op(|out| unsafe {
            sys::shp_tensor_batch_norm(
                self.raw(),
                scale.raw(),
                bias.raw(),
                mean.raw(),
                var.raw(),
                epsilon,
                out,
            )
        })
    }

    /// ONNX LRN across the channels of this tensor `[N, C, ...]`: `x * (bias + alpha / size *
    /// s)^-beta`, `s` the sum of squares over `size` neighbouring channels; ONNX's defaults
    /// are alpha 1e-4, beta 0.75, bias 1 (`shp_tensor_lrn`).
    pub fn lrn(self, size: i64, alpha: f64, beta: f64, bias: f64) -> Result<Tensor<'s>> {
        // SAFETY: the tensor is alive.
        self.op(|out| unsafe { sys::shp_tensor_lrn(self.raw(), size, alpha, beta, bias, out) })
    }

    /// Pads each axis with `low[i]` elements before and `high[i]` after, like numpy.pad:
    /// [`PadMode::Constant`] fills with `value`, [`PadMode::Reflect`] mirrors (every non-zero
    /// pad <= dim - 1), [`PadMode::Edge`] repeats the edge (dim >= 1) (`shp_tensor_pad_mode`).
    pub fn pad_mode(
        self,
        low: &[Dim<'s>],
        high: &[Dim<'s>],
        mode: PadMode,
        value: f64,
    ) -> Result<Tensor<'s>> {
        if low.len() != high.len() {
            return Err(invalid(format!(
                "pad_mode: low has {} entries but high has {}",
                low.len(),
                high.len()
            )));
        }
        let l: Vec<_> = low.iter().map(|d| d.raw()).collect();
        let h: Vec<_> = high.iter().map(|d| d.raw()).collect();
        // SAFETY: both arrays have `l.len()` dims.
        self.op(|out| unsafe {
            sys::shp_tensor_pad_mode(
                self.raw(),
                l.as_ptr(),
                h.as_ptr(),
                l.len(),
                mode.raw(),
                value,
                out,
            )
        })
    }

    /// ONNX DepthToSpace (pixel shuffle): `[N, C, H, W] -> [N, C / b^2, H * b, W * b]`,
    /// `b = blocksize >= 1`; C must be provably divisible by b^2
    /// (`shp_tensor_depth_to_space`).
    pub fn depth_to_space(self, blocksize: i64, mode: DepthToSpaceMode) -> Result<Tensor<'s>> {
        // SAFETY: the tensor is alive.
        self.op(|out| unsafe {
            sys::shp_tensor_depth_to_space(self.raw(), blocksize, mode.raw(), out)
        })
    }

    /// ONNX SpaceToDepth, the inverse of DCR depth_to_space: `[N, C, H, W] -> [N, C * b^2,
    /// H / b, W / b]`; H and W must be provably divisible by b (`shp_tensor_space_to_depth`).
    pub fn space_to_depth(self, blocksize: i64) -> Result<Tensor<'s>> {
        // SAFETY: the tensor is alive.
        self.op(|out| unsafe { sys::shp_tensor_space_to_depth(self.raw(), blocksize, out) })
    }

    /// ONNX Conv (NCHW, 1 to 3 spatial axes, f32 or f64) of this tensor `[N, C, *in]` with
    /// `w` `[O, C / groups, *kernel]` plus `bias` (`[O]`) if given: `[N, O, *out]`, `out =
    /// floordiv(in + pad_begin + pad_end - (kernel - 1) * dilation - 1, stride) + 1`, a dim
    /// expression. An output size that may be < 1 is checked at run time (`shp_tensor_conv`).
    pub fn conv(
        self,
        w: Tensor<'s>,
        bias: Option<Tensor<'s>>,
        options: &ConvOptions<'_>,
    ) -> Result<Tensor<'s>> {
        const OP: &str = "conv";
        if !options.output_padding.is_empty() {
            return Err(invalid(
                "conv: output_padding applies to conv_transpose only; leave it empty",
            ));
        }
        let n = spatial_axes(OP, self)?;
        let strides = opt_array(OP, "strides", options.strides, n, "one per spatial axis")?;
        let dilations = opt_array(
            OP,
            "dilations",
            options.dilations,
            n,
            "one per spatial axis",
        )?;
        let pads = opt_array(OP, "pads", options.pads, 2 * n, "beginnings then ends")?;
        let b = bias.map_or(ptr::null(), |b| b.raw());
        // SAFETY: each non-NULL array has the length checked above; the tensors are alive.
        self.op(|out| unsafe {
            sys::shp_tensor_conv(
                self.raw(),
                w.raw(),
                b,
                n,
                strides,
                dilations,
                pads,
                options.auto_pad.raw(),
                options.groups,
                out,
            )
        })
    }

    /// ONNX ConvTranspose of this tensor `[N, C, *in]` with `w` `[C, O / groups, *kernel]`
    /// (ONNX layout) plus `bias` (`[O]`) if given: `[N, O, *out]`, `out = (in - 1) * stride +
    /// (kernel - 1) * dilation + 1 - pad_begin - pad_end + output_padding`; SAME_UPPER /
    /// SAME_LOWER give `in * stride` (`shp_tensor_conv_transpose`).
    pub fn conv_transpose(
        self,
        w: Tensor<'s>,
        bias: Option<Tensor<'s>>,
        options: &ConvOptions<'_>,
    ) -> Result<Tensor<'s>> {
        const OP: &str = "conv_transpose";
        let n = spatial_axes(OP, self)?;
        let per_axis = "one per spatial axis";
        let strides = opt_array(OP, "strides", options.strides, n, per_axis)?;
        let dilations = opt_array(OP, "dilations", options.dilations, n, per_axis)?;
        let pads = opt_array(OP, "pads", options.pads, 2 * n, "beginnings then ends")?;
        let output_padding = opt_array(OP, "output_padding", options.output_padding, n, per_axis)?;
        let b = bias.map_or(ptr::null(), |b| b.raw());
        // SAFETY: each non-NULL array has the length checked above; the tensors are alive.
        self.op(|out| unsafe {
            sys::shp_tensor_conv_transpose(
                self.raw(),
                w.raw(),
                b,
                n,
                strides,
                dilations,
                pads,
                output_padding,
                options.auto_pad.raw(),
                options.groups,
                out,
            )
        })
    }

    /// XLA ReduceWindow: `op` ([`ReduceOp::Sum`], [`ReduceOp::Max`] or [`ReduceOp::Min`]) over
    /// a sliding `window` (one entry per axis) after base dilation and padding (holes and
    /// padding hold the reduction's identity); each output size must be >= 1, provably or at
    /// run time (`shp_tensor_reduce_window`).
    pub fn reduce_window(
        self,
        op: ReduceOp,
        window: &[i64],
        options: &ReduceWindowOptions<'_, 's>,
    ) -> Result<Tensor<'s>> {
        const OP: &str = "reduce_window";
        let n = window.len();
        let per_axis = "one per axis, as the window";
        let strides = opt_array(OP, "strides", options.strides, n, per_axis)?;
        let wd = opt_array(OP, "window_dilation", options.window_dilation, n, per_axis)?;
        let bd = opt_array(OP, "base_dilation", options.base_dilation, n, per_axis)?;
        let low = opt_dims(OP, "pad_low", options.pad_low, n)?;
        let high = opt_dims(OP, "pad_high", options.pad_high, n)?;
        let (lp, hp) = (ptr_or_null(&low), ptr_or_null(&high));
        // SAFETY: `window` has `n` entries and each non-NULL array has `n` (checked above).
        self.op(|out| unsafe {
            sys::shp_tensor_reduce_window(
                op.raw(),
                self.raw(),
                window.as_ptr(),
                strides,
                wd,
                bd,
                lp,
                hp,
                n,
                out,
            )
        })
    }

    /// ONNX MaxPool on this tensor `[N, C, *spatial]` (f32, f64, i32, i64) with
    /// `kernel_shape` (one entry >= 1 per spatial axis): `[N, C, *out]`, padding never wins
    /// (`shp_tensor_max_pool`). `options.count_include_pad` must be false.
    pub fn max_pool(self, kernel_shape: &[i64], options: &PoolOptions<'_>) -> Result<Tensor<'s>> {
        const OP: &str = "max_pool";
        if options.count_include_pad {
            return Err(invalid(
                "max_pool: count_include_pad applies to avg_pool only; leave it false",
            ));
        }
        let n = kernel_shape.len();
        let per_axis = "one per spatial axis, as kernel_shape";
        let strides = opt_array(OP, "strides", options.strides, n, per_axis)?;
        let dilations = opt_array(OP, "dilations", options.dilations, n, per_axis)?;
        let pads = opt_array(OP, "pads", options.pads, 2 * n, "beginnings then ends")?;
        // SAFETY: `kernel_shape` has `n` entries; each non-NULL array the length checked above.
        self.op(|out| unsafe {
            sys::shp_tensor_max_pool(
                self.raw(),
                n,
                kernel_shape.as_ptr(),
                strides,
                dilations,
                pads,
                options.auto_pad.raw(),
                options.ceil_mode,
                out,
            )
        })
    }

    /// ONNX AveragePool on this floating-point tensor `[N, C, *spatial]`: the window sums
    /// divided by the number of input elements in each window (with `count_include_pad`, the
    /// pads count too; the ceil-mode overhang never does) (`shp_tensor_avg_pool`).
    pub fn avg_pool(self, kernel_shape: &[i64], options: &PoolOptions<'_>) -> Result<Tensor<'s>> {
        const OP: &str = "avg_pool";
        let n = kernel_shape.len();
        let per_axis = "one per spatial axis, as kernel_shape";
        let strides = opt_array(OP, "strides", options.strides, n, per_axis)?;
        let dilations = opt_array(OP, "dilations", options.dilations, n, per_axis)?;
        let pads = opt_array(OP, "pads", options.pads, 2 * n, "beginnings then ends")?;
        // SAFETY: `kernel_shape` has `n` entries; each non-NULL array the length checked above.
        self.op(|out| unsafe {
            sys::shp_tensor_avg_pool(
                self.raw(),
                n,
                kernel_shape.as_ptr(),
                strides,
                dilations,
                pads,
                options.auto_pad.raw(),
                options.ceil_mode,
                options.count_include_pad,
                out,
            )
        })
    }

    /// ONNX GlobalAveragePool: the mean over the spatial axes of `[N, C, *spatial]`
    /// (floating point), kept as size 1 (`shp_tensor_global_avg_pool`).
    pub fn global_avg_pool(self) -> Result<Tensor<'s>> {
        // SAFETY: the tensor is alive.
        self.op(|out| unsafe { sys::shp_tensor_global_avg_pool(self.raw(), out) })
    }

    /// ONNX GlobalMaxPool: the max over the spatial axes of `[N, C, *spatial]`, kept as size 1
    /// (`shp_tensor_global_max_pool`).
    pub fn global_max_pool(self) -> Result<Tensor<'s>> {
        // SAFETY: the tensor is alive.
        self.op(|out| unsafe { sys::shp_tensor_global_max_pool(self.raw(), out) })
    }
}
