//! The runtime: runs a program on concrete arrays with named inputs and outputs.
use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;
use std::ops::Index;
use std::ptr::{self, NonNull};

use crate::array::{Array, ArrayMut, ArrayRef};
use crate::error::{check, Code, Error, Result};
use crate::program::{CostKind, InputRole, Program, ShapeArgs};
use crate::sys;
use crate::util::{read_vec, static_str, CStrings};

/// Options of [`Runtime::with_options`] (applied through `shp_runtime_options_*`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuntimeOptions {
    num_threads: Option<i32>,
    plan_cache_capacity: Option<usize>,
    bound_allocation: Option<usize>,
    max_loop_iterations: Option<i64>,
}

impl RuntimeOptions {
    /// The defaults: every hardware thread, plan cache capacity 16.
    pub fn new() -> RuntimeOptions {
        RuntimeOptions::default()
    }

    /// Threads per kernel call, the calling thread included; 0 restores the default, 1 runs
    /// everything on the calling thread (`shp_runtime_options_set_num_threads`).
    pub fn num_threads(mut self, n: i32) -> RuntimeOptions {
        self.num_threads = Some(n);
        self
    }

    /// How many plans the runtime caches; 0 caches none
    /// (`shp_runtime_options_set_plan_cache_capacity`).
    pub fn plan_cache_capacity(mut self, n: usize) -> RuntimeOptions {
        self.plan_cache_capacity = Some(n);
        self
    }

    /// Allocates each data-dependent stage of a program for the upper bounds of its
    /// data-dependent sizes (at the call's input shapes) when that arena needs at most
    /// `max_bytes`, so the arena never grows whatever counts the data gives; other stages, and
    /// every stage with 0 (the default), are allocated for the actual sizes. Results never
    /// depend on it (`shp_runtime_options_set_bound_allocation`).
    pub fn bound_allocation(mut self, max_bytes: usize) -> RuntimeOptions {
        self.bound_allocation = Some(max_bytes);
        self
    }

    /// Bounds the iterations of every while_loop and scan per call (`max` >= 0; -1, the
    /// default: no bound): a loop that would run more fails with
    /// [`Code::ConstraintViolation`] (a scan before it starts). For programs from files that
    /// are not trusted, whose loops could otherwise run as long as an `i64` counts. Below -1 is
    /// refused by [`Runtime::with_options`] with [`Code::InvalidArgument`]
    /// (`shp_runtime_options_set_max_loop_iterations`).
    pub fn max_loop_iterations(mut self, max: i64) -> RuntimeOptions {
        self.max_loop_iterations = Some(max);
        self
    }
}

/// What [`Runtime::output_dim_bounds`] reports about one dimension of an output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OutputDimBounds {
    /// Whether the dimension's size comes from the data (an unbacked variable).
    pub data_dependent: bool,
    /// Inclusive lower bound; the size itself after a run.
    pub min: i64,
    /// Inclusive upper bound (`i64::MAX`: unbounded); the size itself after a run.
    pub max: i64,
}

/// Executes a program on concrete arrays of any shape it accepts, without recompilation
/// (`shp_runtime_t`). Keeps its program alive (the [`Program`] may be dropped first).
///
/// `Send` but not `Sync`: one thread at a time; create one runtime per thread from a shared
/// program.
pub struct Runtime {
    raw: NonNull<sys::shp_runtime_t>,
    input_names: Vec<String>,
    dim_inputs: Vec<bool>,
    output_names: Vec<String>,
    _not_sync: PhantomData<Cell<()>>,
}

// SAFETY: the runtime has no thread affinity; `&mut self` serializes the calls that change it.
unsafe impl Send for Runtime {}

/// The outputs of [`Runtime::run`], by name in the program's output order.
pub struct Outputs {
    entries: Vec<(String, Array)>,
}

impl Outputs {
    /// Outputs named `names` from arrays returned by the library (owned from now on).
    pub(crate) fn from_raw(names: &[String], arrays: Vec<*mut sys::shp_array_t>) -> Outputs {
        Outputs {
            entries: names
                .iter()
                .cloned()
                .zip(arrays.into_iter().map(Array::from_raw))
                .collect(),
        }
    }

    /// The output named `name`.
    pub fn get(&self, name: &str) -> Option<&Array> {
        self.entries.iter().find(|e| e.0 == name).map(|e| &e.1)
    }

    /// The output named `name`, mutable.
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Array> {
        self.entries
            .iter_mut()
            .find(|e| e.0 == name)
            .map(|e| &mut e.1)
    }

    /// Takes the output named `name` out.
    pub fn remove(&mut self, name: &str) -> Option<Array> {
        let i = self.entries.iter().position(|e| e.0 == name)?;
        Some(self.entries.remove(i).1)
    }

    /// The names, in the program's output order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.0.as_str())
    }

    /// `(name, array)` pairs in the program's output order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Array)> {
        self.entries.iter().map(|e| (e.0.as_str(), &e.1))
    }

    /// Number of outputs.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True if the program has no outputs.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl Index<&str> for Outputs {
    type Output = Array;
    /// Panics if there is no output named `name` (use [`Outputs::get`] to avoid that).
    fn index(&self, name: &str) -> &Array {
        self.get(name)
            .unwrap_or_else(|| panic!("no output named {:?}", name))
    }
}

impl IntoIterator for Outputs {
    type Item = (String, Array);
    type IntoIter = std::vec::IntoIter<(String, Array)>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl fmt::Debug for Outputs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Runtime {
    /// A runtime for `program` with the default options (`shp_runtime_create`).
    pub fn new(program: &Program) -> Result<Runtime> {
        Runtime::create(program, ptr::null())
    }

    /// A runtime for `program` with `options` (`shp_runtime_options_create`, its setters,
    /// `shp_runtime_create`, `shp_runtime_options_destroy`).
    pub fn with_options(program: &Program, options: &RuntimeOptions) -> Result<Runtime> {
        let mut o = ptr::null_mut();
        // SAFETY: out-param.
        check(unsafe { sys::shp_runtime_options_create(&mut o) })?;
        struct Guard(*mut sys::shp_runtime_options_t);
        impl Drop for Guard {
            fn drop(&mut self) {
                // SAFETY: owned options.
                unsafe { sys::shp_runtime_options_destroy(self.0) }
            }
        }
        let guard = Guard(o);
        if let Some(n) = options.num_threads {
            // SAFETY: valid options.
            check(unsafe { sys::shp_runtime_options_set_num_threads(guard.0, n) })?;
        }
        if let Some(n) = options.plan_cache_capacity {
            // SAFETY: valid options.
            check(unsafe { sys::shp_runtime_options_set_plan_cache_capacity(guard.0, n) })?;
        }
        if let Some(n) = options.bound_allocation {
            // SAFETY: valid options.
            check(unsafe { sys::shp_runtime_options_set_bound_allocation(guard.0, n) })?;
        }
        if let Some(n) = options.max_loop_iterations {
            // SAFETY: valid options.
            check(unsafe { sys::shp_runtime_options_set_max_loop_iterations(guard.0, n) })?;
        }
        Runtime::create(program, guard.0)
    }

    fn create(program: &Program, options: *const sys::shp_runtime_options_t) -> Result<Runtime> {
        let mut raw = ptr::null_mut();
        // SAFETY: valid program; options NULL or valid; neither retained.
        check(unsafe { sys::shp_runtime_create(program.as_raw(), options, &mut raw) })?;
        let n_in = program.input_count();
        Ok(Runtime {
            raw: NonNull::new(raw).expect("shp_runtime_create returned NULL"),
            input_names: (0..n_in)
                .map(|i| program.input_name(i).unwrap_or_default())
                .collect(),
            dim_inputs: (0..n_in)
                .map(|i| program.input_role(i) == Some(InputRole::Dim))
                .collect(),
            output_names: (0..program.output_count())
                .map(|i| program.output_name(i).unwrap_or_default())
                .collect(),
            _not_sync: PhantomData,
        })
    }

    /// The raw handle (still owned by this runtime).
    pub fn as_raw(&self) -> *mut sys::shp_runtime_t {
        self.raw.as_ptr()
    }

    /// The program's input names, in declared order.
    pub fn input_names(&self) -> &[String] {
        &self.input_names
    }

    /// The program's output names, in declared order.
    pub fn output_names(&self) -> &[String] {
        &self.output_names
    }

    /// Runs the program on named inputs, returning the outputs by name (`shp_runtime_run`).
    /// A dimension input is a rank-0 `i64` array ([`Array::scalar`],
    /// [`ArrayView::scalar`](crate::ArrayView::scalar)). Every check (names, dtypes, ranks,
    /// dims, constraints, assertions) happens before anything runs; after an error the
    /// runtime is fully usable.
    pub fn run(&mut self, inputs: &[(&str, &dyn ArrayRef)]) -> Result<Outputs> {
        let names = CStrings::new(inputs.iter().map(|i| i.0), "input name")?;
        let arrays: Vec<*const sys::shp_array_t> =
            inputs.iter().map(|i| i.1.as_raw_array()).collect();
        let mut outs: Vec<*mut sys::shp_array_t> = vec![ptr::null_mut(); self.output_names.len()];
        // SAFETY: the arrays are borrowed for the call; `outs` has one slot per output.
        check(unsafe {
            sys::shp_runtime_run(
                self.as_raw(),
                names.as_ptr(),
                arrays.as_ptr(),
                arrays.len(),
                outs.as_mut_ptr(),
                outs.len(),
            )
        })?;
        Ok(Outputs {
            entries: self
                .output_names
                .iter()
                .cloned()
                .zip(outs.into_iter().map(Array::from_raw))
                .collect(),
        })
    }

    /// Runs the program writing into caller-provided arrays, given by output name; each must
    /// have exactly the output's dtype and shape (`shp_runtime_run_into`). Every output must
    /// be given once.
    pub fn run_into(
        &mut self,
        inputs: &[(&str, &dyn ArrayRef)],
        outputs: &mut [(&str, &mut dyn ArrayMut)],
    ) -> Result<()> {
        for (name, _) in outputs.iter() {
            if !self.output_names.iter().any(|n| n == name) {
                return Err(Error::new(
                    Code::NotFound,
                    format!("unknown output '{}'", name),
                ));
            }
        }
        let mut outs = Vec::with_capacity(self.output_names.len());
        for name in &self.output_names {
            let mut found = outputs.iter().filter(|o| o.0 == name);
            match (found.next(), found.next()) {
                (Some(o), None) => outs.push(o.1.as_raw_array() as *mut sys::shp_array_t),
                (None, _) => {
                    return Err(Error::new(
                        Code::InvalidArgument,
                        format!("missing output '{}'", name),
                    ))
                }
                (Some(_), Some(_)) => {
                    return Err(Error::new(
                        Code::InvalidArgument,
                        format!("output '{}' given twice", name),
                    ))
                }
            }
        }
        let names = CStrings::new(inputs.iter().map(|i| i.0), "input name")?;
        let arrays: Vec<*const sys::shp_array_t> =
            inputs.iter().map(|i| i.1.as_raw_array()).collect();
        // SAFETY: inputs are borrowed; outputs are exclusively borrowed (`&mut`), so they do
        // not overlap each other or the inputs.
        check(unsafe {
            sys::shp_runtime_run_into(
                self.as_raw(),
                names.as_ptr(),
                arrays.as_ptr(),
                arrays.len(),
                outs.as_ptr(),
                outs.len(),
            )
        })
    }

    /// Every check of a run on input shapes alone, then the output shapes, in the program's
    /// output order (`shp_runtime_dry_run`, `shp_runtime_output_shape`). A dimension input is
    /// given as `(name, &[value])`. Plans and caches like a run. A data-dependent dimension
    /// (the dry run computes no data) is -1; [`Runtime::output_dim_bounds`] bounds it.
    pub fn dry_run(&mut self, inputs: &[(&str, &[i64])]) -> Result<Vec<Vec<i64>>> {
        let args = self.shape_args(inputs)?;
        // SAFETY: every array has `inputs.len()` entries; dtypes NULL = the program's.
        check(unsafe {
            sys::shp_runtime_dry_run(
                self.as_raw(),
                args.names.as_ptr(),
                ptr::null(),
                args.shapes.as_ptr(),
                args.ranks.as_ptr(),
                inputs.len(),
            )
        })?;
        (0..self.output_names.len())
            .map(|i| self.output_shape(i))
            .collect()
    }

    /// The cost `kind` ([`Program::cost`]) for concrete input shapes, without running
    /// (`shp_runtime_cost`): the inputs and every check are those of [`Runtime::dry_run`],
    /// then the formula of the variant that would run is evaluated. For
    /// [`CostKind::PeakBytes`] the value bounds the memory the run would use. A value beyond
    /// `i64` is [`Code::Overflow`]. Plans and caches like a dry run.
    pub fn cost(&mut self, kind: CostKind, inputs: &[(&str, &[i64])]) -> Result<i64> {
        let args = self.shape_args(inputs)?;
        let mut value = 0i64;
        // SAFETY: every array has `inputs.len()` entries; dtypes NULL = the program's.
        check(unsafe {
            sys::shp_runtime_cost(
                self.as_raw(),
                kind.raw(),
                args.names.as_ptr(),
                ptr::null(),
                args.shapes.as_ptr(),
                args.ranks.as_ptr(),
                inputs.len(),
                &mut value,
            )
        })?;
        Ok(value)
    }

    /// `(name, shape)` pairs as the C calls take them; a dimension input has rank 0.
    fn shape_args(&self, inputs: &[(&str, &[i64])]) -> Result<ShapeArgs> {
        ShapeArgs::new(inputs, |n| {
            self.input_names
                .iter()
                .zip(&self.dim_inputs)
                .any(|(m, &d)| d && m == n)
        })
    }

    /// The shape of output `i` from the last successful run or dry run
    /// (`shp_runtime_output_shape`).
    pub fn output_shape(&self, i: usize) -> Result<Vec<i64>> {
        read_vec(0i64, |out, cap, rank| {
            // SAFETY: `out` has room for `cap` dims.
            unsafe { sys::shp_runtime_output_shape(self.as_raw(), i, out, cap, rank) }
        })
    }

    /// Whether dimension `axis` of output `i` from the last successful run or dry run is
    /// data-dependent, and its bounds (`shp_runtime_output_dim_bounds`): after a dry run such
    /// a dimension is -1 in [`Runtime::output_shape`] and `min..=max` bounds it at those input
    /// shapes; after a run both are the computed size. Other dimensions: not data-dependent,
    /// `min == max ==` the size.
    pub fn output_dim_bounds(&self, i: usize, axis: usize) -> Result<OutputDimBounds> {
        let mut b = OutputDimBounds {
            data_dependent: false,
            min: 0,
            max: 0,
        };
        // SAFETY: valid runtime and out-params.
        check(unsafe {
            sys::shp_runtime_output_dim_bounds(
                self.as_raw(),
                i,
                axis,
                &mut b.data_dependent,
                &mut b.min,
                &mut b.max,
            )
        })?;
        Ok(b)
    }

    /// Number of plans built (`shp_runtime_plans_built`).
    pub fn plans_built(&self) -> u64 {
        // SAFETY: valid runtime.
        unsafe { sys::shp_runtime_plans_built(self.as_raw()) }
    }

    /// Number of calls that found their plan cached (`shp_runtime_cache_hits`).
    pub fn cache_hits(&self) -> u64 {
        // SAFETY: valid runtime.
        unsafe { sys::shp_runtime_cache_hits(self.as_raw()) }
    }

    /// Wall time of the last plan build, in nanoseconds (`shp_runtime_last_plan_build_ns`).
    pub fn last_plan_build_ns(&self) -> i64 {
        // SAFETY: valid runtime.
        unsafe { sys::shp_runtime_last_plan_build_ns(self.as_raw()) }
    }

    /// Threads per kernel call (`shp_runtime_num_threads`).
    pub fn num_threads(&self) -> i32 {
        // SAFETY: valid runtime.
        unsafe { sys::shp_runtime_num_threads(self.as_raw()) }
    }

    /// The SIMD target of the kernels, e.g. `"AVX2"` (`shp_runtime_simd_target`).
    pub fn simd_target(&self) -> &'static str {
        // SAFETY: valid runtime; the string is static.
        static_str(unsafe { sys::shp_runtime_simd_target(self.as_raw()) })
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        // SAFETY: owned.
        unsafe { sys::shp_runtime_destroy(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime")
            .field("inputs", &self.input_names)
            .field("outputs", &self.output_names)
            .field("num_threads", &self.num_threads())
            .finish()
    }
}
