package shapepoly

// #include "shapepoly/shapepoly.h"
import "C"

// Neural-network building blocks (ONNX semantics): composites recorded through the trace, so
// programs that use them serialize, differentiate and fuse like any other. The C header's
// comments hold the full contract of each call.

// AutoPad is the ONNX/PyTorch-style auto padding of conv and pooling (shp_auto_pad_t).
type AutoPad int32

// Auto padding modes.
const (
	// AutoPadNotSet uses the explicit pads.
	AutoPadNotSet AutoPad = C.SHP_AUTO_PAD_NOTSET
	// AutoPadSameUpper gives out = ceil(in / stride); the extra pad goes at the end.
	AutoPadSameUpper AutoPad = C.SHP_AUTO_PAD_SAME_UPPER
	// AutoPadSameLower is AutoPadSameUpper with the extra pad at the beginning.
	AutoPadSameLower AutoPad = C.SHP_AUTO_PAD_SAME_LOWER
	// AutoPadValid pads nothing.
	AutoPadValid AutoPad = C.SHP_AUTO_PAD_VALID
)

// PadMode is a padding mode of Tensor.PadMode (shp_pad_mode_t).
type PadMode int32

// Padding modes (those of ONNX Pad and numpy.pad).
const (
	// PadConstant fills with a value.
	PadConstant PadMode = C.SHP_PAD_CONSTANT
	// PadReflect mirrors without repeating the edge element.
	PadReflect PadMode = C.SHP_PAD_REFLECT
	// PadEdge repeats the edge element.
	PadEdge PadMode = C.SHP_PAD_EDGE
)

// DepthToSpaceMode is a channel order of Tensor.DepthToSpace (shp_depth_to_space_mode_t).
type DepthToSpaceMode int32

// Channel orders (ONNX DepthToSpace's modes).
const (
	DepthToSpaceDCR DepthToSpaceMode = C.SHP_DEPTH_TO_SPACE_DCR
	DepthToSpaceCRD DepthToSpaceMode = C.SHP_DEPTH_TO_SPACE_CRD
)

// ConvOptions holds the optional geometry of Conv and ConvTranspose; the zero value is
// stride 1, dilation 1, no padding.
type ConvOptions struct {
	Strides   []int64 // nil, or one entry >= 1 per spatial axis (nil: all 1)
	Dilations []int64 // nil, or one entry >= 1 per spatial axis (nil: all 1)
	// Pads is nil (all 0) or 2 entries per spatial axis: the beginnings, then the ends (ONNX
	// order); used only with AutoPadNotSet.
	Pads    []int64
	AutoPad AutoPad
	// OutputPadding (ConvTranspose only) is nil (all 0) or one entry per spatial axis, each
	// >= 0 and smaller than the stride or the dilation.
	OutputPadding []int64
}

// PoolOptions holds the optional geometry of MaxPool and AvgPool; the zero value is stride 1,
// dilation 1, no padding, floor mode.
type PoolOptions struct {
	Strides   []int64 // nil, or one entry >= 1 per spatial axis (nil: all 1)
	Dilations []int64 // nil, or one entry >= 1 per spatial axis (nil: all 1)
	// Pads is nil (all 0) or 2 entries per spatial axis (the beginnings, then the ends), each
	// smaller than the kernel extent; used only with AutoPadNotSet.
	Pads     []int64
	AutoPad  AutoPad
	CeilMode bool // the ceiling of the output size instead of the floor
	// CountIncludePad (AvgPool only) divides by a count that includes the pads.
	CountIncludePad bool
}

// ReduceWindowOptions holds the optional arguments of ReduceWindow; the zero value is
// stride 1, no dilation, no padding.
type ReduceWindowOptions struct {
	Strides        []int64 // nil, or one entry >= 1 per axis (nil: all 1)
	WindowDilation []int64 // nil, or one entry >= 1 per axis (nil: all 1)
	BaseDilation   []int64 // nil, or one entry >= 1 per axis (nil: all 1)
	// PadLow and PadHigh are nil (all 0) or one dim per axis, of any sign (negative crops).
	PadLow, PadHigh []Dim
}

type namedLen struct {
	name string
	n    int
}

// checkLens checks that each named list is empty or has want entries; C cannot see the
// length of a list, so a short one would be read past its end.
func checkLens(op string, want int, per string, lists ...namedLen) error {
	for _, l := range lists {
		if name, n := l.name, l.n; n != 0 && n != want {
			return invalidArgument(op + ": " + name + " has " + itoa(int64(n)) + " entries, want " +
				itoa(int64(want)) + " (" + per + ") or none")
		}
	}
	return nil
}

// convGeometry checks o's list lengths for a conv of x, whose rank gives the spatial rank.
func convGeometry(op string, x Tensor, o *ConvOptions) (int, error) {
	ns := x.rank() - 2
	if x._ptr == nil {
		return 0, nil // C reports the missing tensor
	}
	if ns < 1 || ns > 3 {
		// Said here: C would name its num_spatial, which the Go caller never passes.
		return 0, invalidArgument(op + ": x has rank " + itoa(int64(ns+2)) +
			", want [N, C, *spatial] with 1 to 3 spatial axes (rank 3 to 5)")
	}
	if err := checkLens(op, ns, "one per spatial axis of x", namedLen{"Strides", len(o.Strides)},
		namedLen{"Dilations", len(o.Dilations)}, namedLen{"OutputPadding", len(o.OutputPadding)}); err != nil {
		return 0, err
	}
	if err := checkLens(op, 2*ns, "two per spatial axis of x", namedLen{"Pads", len(o.Pads)}); err != nil {
		return 0, err
	}
	return ns, nil
}

// Conv is ONNX Conv in NCHW layout with 1 to 3 spatial axes (shp_tensor_conv): t [N, C, *in]
// (f32 or f64), w [O, C/groups, *kernel] -> [N, O, *out], out = floordiv(in + pad_begin +
// pad_end - (kernel - 1) * dilation - 1, stride) + 1, a dim expression. groups >= 1 divides C
// and O (depthwise: groups == C). bias is the zero Tensor (none) or [O]. The spatial rank is
// that of t less 2. An output size that may be < 1 is checked at run time.
func (t Tensor) Conv(w, bias Tensor, groups int64, o ConvOptions) (Tensor, error) {
	if len(o.OutputPadding) != 0 {
		return Tensor{}, invalidArgument("conv: OutputPadding is for ConvTranspose only")
	}
	ns, err := convGeometry("conv", t, &o)
	if err != nil {
		return Tensor{}, err
	}
	st, di, pa := int64s(o.Strides), int64s(o.Dilations), int64s(o.Pads)
	return tensor(scopeOf(t, w, bias), func(r **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_conv(t.ptr(), w.ptr(), bias.ptr(), C.size_t(ns), firstOrNil(st), firstOrNil(di),
			firstOrNil(pa), C.shp_auto_pad_t(o.AutoPad), C.int64_t(groups), r)
	}, t.scope, w.scope, bias.scope)
}

// ConvTranspose is ONNX ConvTranspose (shp_tensor_conv_transpose): t [N, C, *in], w [C,
// O/groups, *kernel] (ONNX layout) -> [N, O, *out], out = (in - 1) * stride + (kernel - 1) *
// dilation + 1 - pad_begin - pad_end + output_padding. AutoPadSameUpper/SameLower give out =
// in * stride. Other arguments as Conv.
func (t Tensor) ConvTranspose(w, bias Tensor, groups int64, o ConvOptions) (Tensor, error) {
	ns, err := convGeometry("conv_transpose", t, &o)
	if err != nil {
		return Tensor{}, err
	}
	st, di, pa, op := int64s(o.Strides), int64s(o.Dilations), int64s(o.Pads), int64s(o.OutputPadding)
	return tensor(scopeOf(t, w, bias), func(r **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_conv_transpose(t.ptr(), w.ptr(), bias.ptr(), C.size_t(ns), firstOrNil(st),
			firstOrNil(di), firstOrNil(pa), firstOrNil(op), C.shp_auto_pad_t(o.AutoPad), C.int64_t(groups), r)
	}, t.scope, w.scope, bias.scope)
}

// ReduceWindow is XLA ReduceWindow (shp_tensor_reduce_window): op ReduceSum, ReduceMax or
// ReduceMin over a sliding window on every axis of t (rank >= 1; f32, f64, i32, i64), window
// having one entry per axis. t is first base-dilated, then padded by PadLow/PadHigh; holes and
// padding hold the reduction's identity.
func (t Tensor) ReduceWindow(op ReduceOp, window []int64, o ReduceWindowOptions) (Tensor, error) {
	rank := len(window)
	if err := checkLens("reduce_window", rank, "one per entry of window",
		namedLen{"Strides", len(o.Strides)}, namedLen{"WindowDilation", len(o.WindowDilation)},
		namedLen{"BaseDilation", len(o.BaseDilation)}, namedLen{"PadLow", len(o.PadLow)}, namedLen{"PadHigh", len(o.PadHigh)},
	); err != nil {
		return Tensor{}, err
	}
	wi, st, wd, bd := int64s(window), int64s(o.Strides), int64s(o.WindowDilation), int64s(o.BaseDilation)
	var lp, hp **C.shp_dim_t
	if len(o.PadLow) > 0 {
		lp = &dimPtrs(o.PadLow)[0]
	}
	if len(o.PadHigh) > 0 {
		hp = &dimPtrs(o.PadHigh)[0]
	}
	return tensor(t.scope, func(r **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_reduce_window(C.shp_reduce_op_t(op), t.ptr(), firstOrNil(wi), firstOrNil(st), firstOrNil(wd),
			firstOrNil(bd), lp, hp, C.size_t(rank), r)
	}, dimScopes(o.PadLow), dimScopes(o.PadHigh))
}

// poolGeometry checks o's list lengths for a pool with len(kernelShape) spatial axes.
func poolGeometry(op string, kernelShape []int64, o *PoolOptions) error {
	ns := len(kernelShape)
	if ns == 0 {
		return invalidArgument(op + ": kernelShape is empty, want one entry per spatial axis")
	}
	if err := checkLens(op, ns, "one per entry of kernelShape",
		namedLen{"Strides", len(o.Strides)}, namedLen{"Dilations", len(o.Dilations)},
	); err != nil {
		return err
	}
	return checkLens(op, 2*ns, "two per entry of kernelShape", namedLen{"Pads", len(o.Pads)})
}

// MaxPool is ONNX MaxPool (shp_tensor_max_pool) on t [N, C, *spatial] (f32, f64, i32, i64)
// with one entry of kernelShape (>= 1) per spatial axis -> [N, C, *out]. Padding never wins.
// AutoPadSameUpper/SameLower: out = ceil(in / stride); otherwise out = floordiv(in + pads -
// extent, stride) + 1, or with CeilMode the ceiling (less one when the last window would start
// in the end padding, as PyTorch).
func (t Tensor) MaxPool(kernelShape []int64, o PoolOptions) (Tensor, error) {
	if o.CountIncludePad {
		return Tensor{}, invalidArgument("max_pool: CountIncludePad is for AvgPool only")
	}
	if err := poolGeometry("max_pool", kernelShape, &o); err != nil {
		return Tensor{}, err
	}
	ks, st, di, pa := int64s(kernelShape), int64s(o.Strides), int64s(o.Dilations), int64s(o.Pads)
	return tensor(t.scope, func(r **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_max_pool(t.ptr(), C.size_t(len(ks)), firstOrNil(ks), firstOrNil(st), firstOrNil(di),
			firstOrNil(pa), C.shp_auto_pad_t(o.AutoPad), C.bool(o.CeilMode), r)
	})
}

// AvgPool is ONNX AveragePool (shp_tensor_avg_pool) on a floating-point t: the window sums
// divided by the number of input elements each window covers, or with CountIncludePad the
// pads too (the ceil-mode overhang never counts). Other arguments as MaxPool.
func (t Tensor) AvgPool(kernelShape []int64, o PoolOptions) (Tensor, error) {
	if err := poolGeometry("avg_pool", kernelShape, &o); err != nil {
		return Tensor{}, err
	}
	ks, st, di, pa := int64s(kernelShape), int64s(o.Strides), int64s(o.Dilations), int64s(o.Pads)
	return tensor(t.scope, func(r **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_avg_pool(t.ptr(), C.size_t(len(ks)), firstOrNil(ks), firstOrNil(st), firstOrNil(di),
			firstOrNil(pa), C.shp_auto_pad_t(o.AutoPad), C.bool(o.CeilMode), C.bool(o.CountIncludePad), r)
	})
}

// GlobalAvgPool is ONNX GlobalAveragePool: the mean over the spatial axes of t [N, C,
// *spatial] (rank >= 3, floating point), kept as size 1 (shp_tensor_global_avg_pool).
func (t Tensor) GlobalAvgPool() (Tensor, error) {
	return tensor(t.scope, func(r **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_global_avg_pool(t.ptr(), r)
	})
}

// GlobalMaxPool is ONNX GlobalMaxPool: the max over the spatial axes of t (rank >= 3; f32,
// f64, i32, i64), kept as size 1 (shp_tensor_global_max_pool).
func (t Tensor) GlobalMaxPool() (Tensor, error) {
	return tensor(t.scope, func(r **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_global_max_pool(t.ptr(), r)
	})
}

// LeakyRelu is ONNX LeakyRelu: t >= 0 ? t : alpha * t, alpha finite (shp_tensor_leaky_relu).
func (t Tensor) LeakyRelu(alpha float64) (Tensor, error) {
	return tensor(t.scope, func(r **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_leaky_relu(t.ptr(), C.double(alpha), r)
	})
}

// PRelu is ONNX PRelu: t >= 0 ? t : slope * t, where slope broadcasts to t's shape (never the
// reverse) (shp_tensor_prelu).
func (t Tensor) PRelu(slope Tensor) (Tensor, error) {
	return tensor(scopeOf(t, slope), func(r **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_prelu(t.ptr(), slope.ptr(), r)
	}, t.scope, slope.scope)
}

// Elu is ONNX Elu: t >= 0 ? t : alpha * (e^t - 1), alpha finite (shp_tensor_elu).
func (t Tensor) Elu(alpha float64) (Tensor, error) {
	return tensor(t.scope, func(r **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_elu(t.ptr(), C.double(alpha), r)
	})
}

// Selu is ONNX Selu: gamma * (t > 0 ? t : alpha * (e^t - 1)) (shp_tensor_selu). ONNX's
// defaults are alpha = 1.67326319217681884765625, gamma = 1.05070102214813232421875.
func (t Tensor) Selu(alpha, gamma float64) (Tensor, error) {
	return tensor(t.scope, func(r **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_selu(t.ptr(), C.double(alpha), C.double(gamma), r)
	})
}

// Softplus is ONNX Softplus, log(1 + e^t), in a stable form (shp_tensor_softplus).
func (t Tensor) Softplus() (Tensor, error) {
	return tensor(t.scope, func(r **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_softplus(t.ptr(), r)
	})
}

// Softsign is ONNX Softsign: t / (1 + |t|) (shp_tensor_softsign).
func (t Tensor) Softsign() (Tensor, error) {
	return tensor(t.scope, func(r **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_softsign(t.ptr(), r)
	})
}

// Clip is ONNX Clip: min(max(t, min), max), for every numeric dtype (shp_tensor_clip).
// math.Inf(-1) / math.Inf(1) mean no bound; NaN bounds are errors; min > max gives max
// everywhere. Integer t: the bounds are rounded inward.
func (t Tensor) Clip(min, max float64) (Tensor, error) {
	return tensor(t.scope, func(r **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_clip(t.ptr(), C.double(min), C.double(max), r)
	})
}

// HardSigmoid is ONNX HardSigmoid: max(0, min(1, alpha * t + beta)) (ONNX's defaults: 0.2,
// 0.5) (shp_tensor_hard_sigmoid).
func (t Tensor) HardSigmoid(alpha, beta float64) (Tensor, error) {
	return tensor(t.scope, func(r **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_hard_sigmoid(t.ptr(), C.double(alpha), C.double(beta), r)
	})
}

// LogSoftmax is ONNX LogSoftmax along axis (negative counts from the end), in a stable form
// (shp_tensor_log_softmax).
func (t Tensor) LogSoftmax(axis int64) (Tensor, error) {
	return tensor(t.scope, func(r **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_log_softmax(t.ptr(), C.int64_t(axis), r)
	})
}

// BatchNorm is ONNX BatchNormalization, inference form (shp_tensor_batch_norm): t [N, C, ...]
// (rank >= 2); scale, bias, mean and variance each [C]; epsilon finite and >= 0. Computes
// (t - mean) * scale / sqrt(variance + epsilon) + bias.
func (t Tensor) BatchNorm(scale, bias, mean, variance Tensor, epsilon float64) (Tensor, error) {
	return tensor(scopeOf(t, scale, bias, mean, variance), func(r **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_batch_norm(t.ptr(), scale.ptr(), bias.ptr(), mean.ptr(), variance.ptr(),
			C.double(epsilon), r)
	}, t.scope, scale.scope, bias.scope, mean.scope, variance.scope)
}

// LRN is ONNX LRN across channels (shp_tensor_lrn): t [N, C, ...] (rank >= 2), size >= 1;
// y = t * (bias + alpha / size * s)^-beta, s the sum of the squares over the size
// neighbouring channels. ONNX's defaults: alpha 1e-4, beta 0.75, bias 1.
func (t Tensor) LRN(size int64, alpha, beta, bias float64) (Tensor, error) {
	return tensor(t.scope, func(r **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_lrn(t.ptr(), C.int64_t(size), C.double(alpha), C.double(beta), C.double(bias), r)
	})
}

// PadMode pads each axis i of t (any dtype) by low[i] before and high[i] after, one dim
// (provably >= 0) per axis (shp_tensor_pad_mode). PadConstant fills with value (as Pad);
// PadReflect needs every non-zero pad <= dim - 1; PadEdge needs dim >= 1 on every padded
// axis. A need that is provably false is a ShapeMismatch naming the axis; an undecidable one
// is checked at run time.
func (t Tensor) PadMode(low, high []Dim, mode PadMode, value float64) (Tensor, error) {
	if len(low) != len(high) {
		return Tensor{}, invalidArgument("pad_mode: low and high have different lengths")
	}
	lp, hp := dimPtrs(low), dimPtrs(high)
	return tensor(t.scope, func(r **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_pad_mode(t.ptr(), firstOrNil(lp), firstOrNil(hp), C.size_t(len(lp)),
			C.shp_pad_mode_t(mode), C.double(value), r)
	}, dimScopes(low), dimScopes(high))
}

// DepthToSpace is ONNX DepthToSpace (pixel shuffle, shp_tensor_depth_to_space): t [N, C, H,
// W] (any dtype) -> [N, C / b^2, H * b, W * b], b = blocksize >= 1; C must be provably
// divisible by b^2.
func (t Tensor) DepthToSpace(blocksize int64, mode DepthToSpaceMode) (Tensor, error) {
	return tensor(t.scope, func(r **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_depth_to_space(t.ptr(), C.int64_t(blocksize), C.shp_depth_to_space_mode_t(mode), r)
	})
}

// SpaceToDepth is ONNX SpaceToDepth, the inverse of DepthToSpaceDCR
// (shp_tensor_space_to_depth): t [N, C, H, W] (any dtype) -> [N, C * b^2, H / b, W / b]; H
// and W must be provably divisible by b = blocksize >= 1.
func (t Tensor) SpaceToDepth(blocksize int64) (Tensor, error) {
	return tensor(t.scope, func(r **C.shp_tensor_t) *C.shp_error_t {
		return C.shp_tensor_space_to_depth(t.ptr(), C.int64_t(blocksize), r)
	})
}
