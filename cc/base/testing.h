// Helpers shared by the unit tests of every C++ layer.
#ifndef SHAPEPOLY_CC_BASE_TESTING_H_
#define SHAPEPOLY_CC_BASE_TESTING_H_

#include <gtest/gtest.h>
#include <pthread.h>

#include <cstddef>
#include <exception>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "cc/base/error.h"

// SHP_TEST_SANITIZED is defined in a build under AddressSanitizer, ThreadSanitizer or
// MemorySanitizer (clang's __has_feature, GCC's __SANITIZE_*__): tests that measure address
// space or do work whose cost the sanitizers multiply check it.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define SHP_TEST_SANITIZED 1
#endif
#endif
#if !defined(SHP_TEST_SANITIZED) && (defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__))
#define SHP_TEST_SANITIZED 1
#endif

namespace shp {
namespace testing {

#ifdef SHP_TEST_SANITIZED
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

// Runs `f` and returns the shp::Error it throws (fails the test if it does not throw).
template <typename F>
Error Catch(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected an shp::Error";
  return Error(Code::kOk, "");
}

// True if `text` contains `part` (for EXPECT_TRUE with a readable failure).
inline ::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

// Runs f(0), ..., f(n - 1) on n threads started together and waits for all of them (`f` must
// not throw: record failures and check them after).
inline void OnThreads(int n, const std::function<void(int)>& f) {
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t) threads.emplace_back(f, t);
  for (std::thread& th : threads) th.join();
}

// Runs `f` on a thread with a `stack_bytes` stack (Go and C# callers often run on small
// stacks) and rethrows what it threw.
inline void OnSmallStack(size_t stack_bytes, const std::function<void()>& f) {
  struct Job {
    const std::function<void()>* f;
    std::exception_ptr error;
  } job{&f, nullptr};
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, stack_bytes), 0);
  pthread_t th;
  auto body = [](void* arg) -> void* {
    Job* j = static_cast<Job*>(arg);
    try {
      (*j->f)();
    } catch (...) {
      j->error = std::current_exception();
    }
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&th, &attr, body, &job), 0);
  pthread_join(th, nullptr);
  pthread_attr_destroy(&attr);
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace testing
}  // namespace shp

#endif  // SHAPEPOLY_CC_BASE_TESTING_H_
