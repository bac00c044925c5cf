// Convolution (XLA ConvGeneralDilated in NCHW layout, 1 to 3 spatial axes) on concrete extents.
// Plain C++: no Highway types here.
//
//   y[n, o, q...] = sum_{c < C/G, j...} w[o, c, j...] * xd[n, g*C/G + c, q*stride + j*rhs_dil -
//   pad]
//
// where g = o / (O/G), and xd is x dilated by lhs_dilation along each spatial axis (x[i] sits at
// i*lhs_dilation, zeros between); positions outside xd read 0 (padding). Negative pads crop.
//
// Methods (ChooseConvMethod): a 1x1, stride-1, unpadded conv is one matrix product per (batch,
// group); a conv with one input channel per group (depthwise, any depth multiplier) runs a
// direct SIMD kernel; an f32 conv on 1 or 2 axes whose output rows are wide enough runs the band
// kernel (an implicit GEMM over zero-padded row bands, no scratch); every other conv is an
// explicit im2col into a caller-given column buffer, tiled over the output positions so the
// buffer stays bounded, and the packed matmul.
#ifndef SHAPEPOLY_CC_KERNELS_CONV_H_
#define SHAPEPOLY_CC_KERNELS_CONV_H_

#include <cstdint>

namespace shp {
namespace kernels {

class ThreadPool;  // cc/kernels/parallel.h

constexpr int kMaxConvSpatialRank = 3;

struct ConvParams {
  int spatial_rank = 0;                      // 1 to kMaxConvSpatialRank
  int64_t batch = 0;                         // N
  int64_t in_channels = 0;                   // C (x's axis 1)
  int64_t out_channels = 0;                  // O (w's axis 0, y's axis 1)
  int64_t groups = 1;                        // G: C and O are multiples of it; w's axis 1 is C/G
  int64_t in[kMaxConvSpatialRank] = {};      // x's spatial extents
  int64_t kernel[kMaxConvSpatialRank] = {};  // w's spatial extents (>= 1)
  int64_t out[kMaxConvSpatialRank] = {};     // y's spatial extents
  int64_t stride[kMaxConvSpatialRank] = {};  // >= 1
  int64_t lhs_dilation[kMaxConvSpatialRank] = {};  // >= 1
  int64_t rhs_dilation[kMaxConvSpatialRank] = {};  // >= 1
  int64_t pad_low[kMaxConvSpatialRank] = {};       // any sign
};

// True if the rank is in [1, 3], extents are >= 0 (kernel extents >= 1), strides and
// dilations >= 1, groups >= 1 dividing both channel counts, and no element count overflows.
bool ValidConvParams(const ConvParams& p);

enum class ConvMethod {
  kMatmul,  // 1x1, stride 1, no padding, no dilation: y = w · x per (batch, group)
  kDirect,  // one input channel per group, or a column buffer too small for im2col
  kIm2col,  // im2col tiles + packed matmul
  kBand,    // f32: implicit GEMM over zero-padded row bands (ConvBandF32), no scratch
  kNchwc,   // f32: the direct NCHWc kernel (ConvNchwcF32), w packed into the scratch per call
};

// The rows of the im2col matrix: (C/G) * prod(kernel).
int64_t ConvColumnRows(const ConvParams& p);
// The method ConvF32 (f64: ConvF64) uses with a column buffer of `scratch_elements` elements on
// the SIMD target dispatched now.
ConvMethod ChooseConvMethod(const ConvParams& p, int64_t scratch_elements, bool f64 = false);

// Computes y (N, O, out...) from x (N, C, in...) and w (O, C/G, kernel...), all contiguous
// row-major. `scratch` (scratch_elements elements, may be null when 0) holds the im2col tiles;
// it is only used by ConvMethod::kIm2col. Returns false, writing nothing, if
// !ValidConvParams(p). pool: splits the work over output elements (never over a reduction), so
// the result is bitwise identical for any thread count; nullptr runs on the caller's thread.
// No allocation except the matmul's per-thread packing buffers (std::bad_alloc if those fail).
bool ConvF32(const ConvParams& p, const float* x, const float* w, float* y, float* scratch,
             int64_t scratch_elements, ThreadPool* pool);

// What follows a conv in a CNN layer (a bias, a residual connection and a ReLU), for a runtime
// that fuses them: each output y[b, o, ...], once final, becomes
//   y + bias[o]          (bias != nullptr: one f32 add, y first)
//   y + residual[b, o, ...] (residual != nullptr: one f32 add, laid out as y)
//   max(y, 0)            (relu; NaN stays NaN and -0 becomes +0, as BinaryOp::kMax(y, 0))
// bitwise identical to the conv followed by separate f32 adds of the bias broadcast over
// [N, O, 1...] and of the residual, then max(., 0), for every method, thread count and SIMD
// target. The band kernel applies it as it stores its last channel block (no extra pass over
// y); the other methods in one pass after the conv. bias has O elements; neither bias nor
// residual may overlap y. The default does nothing.
struct ConvEpilogue {
  const float* bias = nullptr;      // [O], or nullptr
  const float* residual = nullptr;  // [N, O, *out] as y, or nullptr
  bool relu = false;
};
// ConvF32 followed by the epilogue. Returns false, writing nothing, as ConvF32.
bool ConvF32(const ConvParams& p, const float* x, const float* w, float* y, float* scratch,
             int64_t scratch_elements, const ConvEpilogue& epilogue, ThreadPool* pool);
bool ConvF64(const ConvParams& p, const double* x, const double* w, double* y, double* scratch,
             int64_t scratch_elements, ThreadPool* pool);

// ---- The channels-last product for small output planes, with weights packed once ----
// On a plane of few output positions P (7x7, 14x14: ResNet's deep layers), the product
// y[b] = W · columns vectorizes along P and pads it to whole register tiles (49 positions
// computed as 64); transposed, y[b]^T [P, O] = columns^T · W^T vectorizes along the O output
// channels instead and keeps the weights as the packed right operand, packed once per
// runtime (W is a constant or a parameter's default). Every output is the same chain of FMAs
// over the same k blocks as the methods it replaces (kMatmul, kIm2col), and the epilogue the
// same adds and maxima, so the bits do not depend on whether it runs.
class PackedMatrixF32;  // cc/kernels/matmul_prepacked.h

// Output planes up to which, and output channels from which, ConvF32Packed takes a conv.
constexpr int64_t kConvChannelsMaxPlane = 256;
constexpr int64_t kConvChannelsMinOut = 64;
// True if ConvF32Packed computes p: f32 (the caller's to ensure), one group, an output plane
// of at most kConvChannelsMaxPlane positions and no more than the output channels (at least
// kConvChannelsMinOut), where ChooseConvMethod(p, columns_elements) is kMatmul or kIm2col.
bool ConvChannelsTakes(const ConvParams& p, int64_t columns_elements);
// The elements of the two buffers ConvF32Packed needs: the columns of one image (0 for a
// pointwise conv, which reads x in place) and the product of one image (P x O).
int64_t ConvChannelsColumns(const ConvParams& p);
int64_t ConvChannelsProduct(const ConvParams& p);
// W^T packed for ConvF32Packed: B[r, o] = w[o * rows + r], rows = ConvColumnRows(p) (w as
// ConvF32 reads it, groups == 1). Throws std::bad_alloc.
PackedMatrixF32 PackConvWeightsF32(const ConvParams& p, const float* w);
// ConvF32 followed by the epilogue, by the channels-last product: for each image, the columns
// (unless pointwise) into `columns`, the product with the packed weights into `product` (with
// the epilogue), transposed into y. Bitwise ConvF32's result, for any thread count. Returns
// false, writing nothing, when !ConvChannelsTakes(p, columns_elements), a buffer is smaller
// than ConvChannelsColumns / ConvChannelsProduct, or wt is not PackConvWeightsF32(p, .) on the
// target dispatched now: then call ConvF32.
bool ConvF32Packed(const ConvParams& p, const float* x, const PackedMatrixF32& wt, float* y,
                   float* columns, int64_t columns_elements, float* product,
                   int64_t product_elements, const ConvEpilogue& epilogue, ThreadPool* pool);

// The direct kernel alone (ConvMethod::kDirect), for any valid `p` (unchecked): what ConvF32 /
// ConvF64 run for depthwise convs. For benchmarks and tests.
void ConvDirectF32(const ConvParams& p, const float* x, const float* w, float* y, ThreadPool* pool);
void ConvDirectF64(const ConvParams& p, const double* x, const double* w, double* y,
                   ThreadPool* pool);

// The band kernel alone (ConvMethod::kBand): f32 convs on 1 or 2 spatial axes with strides up
// to 4, no input dilation and at least 16 terms per output (channels per group x taps), whose
// rows waste few computed positions (ConvBandTakes). Each output channel tile accumulates its sum
// over channels and taps by FMAs, in channel blocks of a fixed size for the shapes; split over
// (batch, group, band of output rows), so bitwise identical for any thread count. No allocation (a
// 128 KiB stack buffer per worker). Returns false, writing nothing, when the kernel does not take p
// (unchecked p).
bool ConvBandF32(const ConvParams& p, const float* x, const float* w, float* y, ThreadPool* pool);
bool ConvBandF32(const ConvParams& p, const float* x, const float* w, float* y,
                 const ConvEpilogue& epilogue, ThreadPool* pool);
// The epilogue alone, in place, over y as `planes` planes of `plane` elements whose output
// channel is (plane index) % channels.
void ApplyConvEpilogueF32(float* y, int64_t planes, int64_t plane, int64_t channels,
                          const ConvEpilogue& epilogue, ThreadPool* pool);
// True if ConvBandF32 takes p on the SIMD target dispatched now.
bool ConvBandTakes(const ConvParams& p);
// Whether ChooseConvMethod may pick kBand (default true, or false when the environment has
// SHP_CONV_BAND=0 at load time). Process-wide, for tests and benchmarks that compare the methods
// on the same shapes.
void SetConvBandEnabled(bool enabled);

// ---- The direct NCHWc kernel (issue 40), with weights packed once ----
// For f32 one-group convs on 1 or 2 spatial axes without input dilation (column stride 1 or 2):
// the input rows of a band reordered into channel blocks of the vector width (a per-thread
// buffer, no layout change outside the call), the weights packed once as [O/2L][C/L][taps][L][2L]
// (L: the f32 lanes of the target), and a register tile of up to 14 output positions of a row
// (6 on 16-register targets) x 2L output channels accumulated over (channel block, tap, channel)
// by broadcast FMAs; each tile goes back to y's NCHW rows with the epilogue as it stores. Every
// output is one FMA chain from zero, so the result is the same bits for any thread count (work
// items are (image, band of output rows, group of output channels)). Not bitwise the other
// methods (another summation order): within f32 rounding of them.
class PackedConvNchwcF32 {
 public:
  PackedConvNchwcF32() = default;
  ~PackedConvNchwcF32();
  PackedConvNchwcF32(PackedConvNchwcF32&& o) noexcept;
  PackedConvNchwcF32& operator=(PackedConvNchwcF32&& o) noexcept;
  PackedConvNchwcF32(const PackedConvNchwcF32&) = delete;
  PackedConvNchwcF32& operator=(const PackedConvNchwcF32&) = delete;
  bool empty() const { return data_ == nullptr; }
  const float* data() const { return data_; }
  int64_t elements() const { return elements_; }
  int32_t lanes() const { return lanes_; }  // the f32 lanes of the target that packed it
  // What it was packed for: out_channels, in_channels and taps.
  int64_t out_channels() const { return o_; }
  int64_t in_channels() const { return c_; }
  int64_t taps() const { return taps_; }

 private:
  friend PackedConvNchwcF32 PackConvNchwcF32(const ConvParams& p, const float* w);
  float* data_ = nullptr;  // 64-byte aligned, std::free
  int64_t elements_ = 0;
  int32_t lanes_ = 0;
  int64_t o_ = 0, c_ = 0, taps_ = 0;
};
// True if the NCHWc kernel computes p on the target dispatched now and is measured faster there
// than the band kernel and im2col (see benchmarks/conv/README.md). ChooseConvMethod picks kNchwc
// for such p when the scratch holds the packed weights (ConvNchwcPackedElements) and there are at
// least 196 outputs per output channel (batch x plane) to amortize packing them: then ConvF32
// packs w there on every call, and a caller with w packed once (PackConvNchwcF32) gets the same
// bits from ConvNchwcF32 with that packing.
bool ConvNchwcTakes(const ConvParams& p);
// The elements of PackConvNchwcF32(p, .) on the target dispatched now (0 if it does not
// support p).
int64_t ConvNchwcPackedElements(const ConvParams& p);
// Whether ChooseConvMethod may pick kNchwc (default true, or false when the environment has
// SHP_CONV_NCHWC=0 at load time). Process-wide, for tests and benchmarks.
void SetConvNchwcEnabled(bool enabled);
// True if the NCHWc kernel can compute p on the target dispatched now (faster or not).
bool ConvNchwcSupports(const ConvParams& p);
// w [O, C, kernel...] packed for ConvNchwcF32 on the target dispatched now; empty when
// !ConvNchwcSupports(p). Throws std::bad_alloc.
PackedConvNchwcF32 PackConvNchwcF32(const ConvParams& p, const float* w);
// y = conv(x, w) with the epilogue, w packed by PackConvNchwcF32(p, w) on the target dispatched
// now. Returns false, writing nothing, when !ConvNchwcSupports(p) or wt was packed for another
// target or shape: then call ConvF32. Uses the calling threads' ThreadScratch
// (kScratchMatmulB) for the reordered input bands (up to 256 KiB each; std::bad_alloc).
bool ConvNchwcF32(const ConvParams& p, const float* x, const PackedConvNchwcF32& wt, float* y,
                  const ConvEpilogue& epilogue, ThreadPool* pool);
// The same with w [O, C, kernel...] packed into `scratch` first (any alignment); false, writing
// nothing, when !ConvNchwcSupports(p) or scratch_elements < ConvNchwcPackedElements(p).
bool ConvNchwcF32(const ConvParams& p, const float* x, const float* w, float* y, float* scratch,
                  int64_t scratch_elements, const ConvEpilogue& epilogue, ThreadPool* pool);

}  // namespace kernels
}  // namespace shp

#endif  // SHAPEPOLY_CC_KERNELS_CONV_H_
