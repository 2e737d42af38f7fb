// Reliability of every filter: threads, streams, devices, allocation failures, progress and abort, soak, label types.
#include "Common/itkReliabilityTestSupport.h"

/** Eight threads, each running a different algorithm on its own input, `Rounds()` times; every result equals that
 * workload's single-threaded CPU reference. With a GPU the rounds alternate between the backends. */
TEST(Reliability, EightAlgorithmsOnEightThreadsMatchSingleThreadedRuns)
{
  const bool                             gpu = HasCudaDevice();
  std::vector<std::shared_ptr<Workload>> workloads;
  std::vector<Fingerprint>               expected;
  for (unsigned k = 0; k < 8; ++k)
  {
    workloads.push_back(MakeWorkload(k, 100 + k));
    expected.push_back(workloads.back()->run(Backend::CPU, 0));
    if (gpu)
      ASSERT_EQ(workloads.back()->run(Backend::CUDA, 0), expected.back()) << workloads.back()->name;
  }
  const int                          rounds = Rounds();
  std::vector<std::atomic<unsigned>> mismatches(8);
  OnThreads(8,
            [&](unsigned t)
            {
              for (int r = 0; r < rounds; ++r)
              {
                const Backend b = gpu && (r + t) % 2 == 0 ? Backend::CUDA : Backend::CPU;
                if (workloads[t]->run(b, 0) != expected[t])
                  ++mismatches[t];
              }
            });
  for (unsigned k = 0; k < 8; ++k)
    EXPECT_EQ(mismatches[k].load(), 0u) << workloads[k]->name << ": runs that differ of " << rounds;
}

/** Streams: two threads whose filters share one non-blocking stream, two more with a stream each, and two on the
 * legacy default stream, all at once; every result equals the reference. */
TEST(Reliability, GPUSharedAndSeparateStreams)
{
  CHS_REQUIRE_GPU();
  const std::uintptr_t shared = chs::testing::CreateStream(0), own0 = chs::testing::CreateStream(0),
                       own1                         = chs::testing::CreateStream(0);
  const std::uintptr_t                   streams[6] = { shared, shared, own0, own1, 0, 0 };
  std::vector<std::shared_ptr<Workload>> workloads;
  std::vector<Fingerprint>               expected;
  for (unsigned t = 0; t < 6; ++t)
  {
    // watershed, image dendrogram, seeded IFT, waterfall, graph dendrogram, connected components
    workloads.push_back(MakeWorkload(t * 3 + 1, 200 + t));
    expected.push_back(workloads.back()->run(Backend::CPU, 0));
  }
  const int                          rounds = Rounds();
  std::vector<std::atomic<unsigned>> mismatches(6);
  OnThreads(6,
            [&](unsigned t)
            {
              for (int r = 0; r < rounds; ++r)
                if (workloads[t]->run(Backend::CUDA, streams[t]) != expected[t])
                  ++mismatches[t];
            });
  for (unsigned t = 0; t < 6; ++t)
    EXPECT_EQ(mismatches[t].load(), 0u) << workloads[t]->name << " on stream " << t;
  chs::testing::DestroyStream(shared);
  chs::testing::DestroyStream(own0);
  chs::testing::DestroyStream(own1);
}

/** Two devices at once: the eight algorithms, four threads on device 0 and four on device 1. */
TEST(Reliability, GPUTwoDevicesAtOnce)
{
  CHS_REQUIRE_GPU();
  if (chs::CudaDeviceCount() < 2)
    GTEST_SKIP() << "one CUDA device";
  std::vector<std::shared_ptr<Workload>> workloads;
  std::vector<Fingerprint>               expected;
  for (unsigned k = 0; k < 8; ++k)
  {
    workloads.push_back(MakeWorkload(k, 300 + k, int(k % 2)));
    expected.push_back(workloads.back()->run(Backend::CPU, 0));
  }
  const int                          rounds = Rounds();
  std::vector<std::atomic<unsigned>> mismatches(8);
  OnThreads(8,
            [&](unsigned t)
            {
              for (int r = 0; r < rounds; ++r)
                if (workloads[t]->run(Backend::CUDA, 0) != expected[t])
                  ++mismatches[t];
            });
  for (unsigned k = 0; k < 8; ++k)
    EXPECT_EQ(mismatches[k].load(), 0u) << workloads[k]->name << " on device " << k % 2;
}

/** Every device allocation of every algorithm's update made to fail in turn: each failure is an ExceptionObject that
 * names the CUDA error, leaves no output buffer and no device memory behind, and the next update succeeds with the
 * reference's result. */
TEST(Reliability, GPUEveryDeviceAllocationFailureOfEveryAlgorithm)
{
  CHS_REQUIRE_GPU();
  for (unsigned k = 0; k < 8; ++k)
  {
    auto              w        = MakeWorkload(k, 400 + k);
    const Fingerprint expected = w->run(Backend::CPU, 0);
    ASSERT_EQ(w->run(Backend::CUDA, 0), expected) << w->name; // warms up the context and the memory pool
    uint64_t freeBefore = 0, total = 0;
    chs::CudaDeviceMemoryInfo(0, freeBefore, total);
    int failing = 1;
    for (; failing <= 200; ++failing)
    {
      chs::testing::FailDeviceAllocationAfter(failing);
      bool threw = false;
      try
      {
        w->run(Backend::CUDA, 0);
      }
      catch (const itk::ExceptionObject & e)
      {
        threw = true;
        EXPECT_NE(std::string(e.GetDescription()).find("cudaErrorMemoryAllocation"), std::string::npos)
          << w->name << ", allocation " << failing << ": " << e.GetDescription();
        EXPECT_TRUE(w->released()) << w->name << ", allocation " << failing << ": an output kept its buffer";
        w->reset();
      }
      chs::testing::FailDeviceAllocationAfter(0);
      uint64_t freeAfter = 0;
      chs::CudaDeviceMemoryInfo(0, freeAfter, total);
      EXPECT_EQ(freeAfter, freeBefore) << w->name << ", allocation " << failing;
      EXPECT_EQ(w->run(Backend::CUDA, 0), expected) << w->name << ", after allocation " << failing << " failed";
      if (!threw) // the update made fewer allocations than `failing`: every one has been made to fail
        break;
    }
    EXPECT_GT(failing, 1) << w->name << ": no allocation was made to fail";
    EXPECT_LE(failing, 200) << w->name << ": more than 200 allocations";
    std::cout << w->name << ": " << failing - 1 << " device allocations, each made to fail in turn\n";
  }
}

/** Progress and abort, on both backends (CUDA where there is a device): during an update every module filter of
 * every workload reports rising progress that ends at 1 and passes through values between (at least ten on the CPU
 * references, whose loops report along the way; the CUDA backends report their phases); AbortGenerateData set from
 * the filter's first report between 0 and 1 stops the update with itk::ProcessAborted and releases its output, and
 * the next update gives the result of one that was not aborted. */
TEST(Reliability, ProgressAndAbortOnBothBackends)
{
  std::vector<Backend> backends{ Backend::CPU };
  if (chs::CudaDeviceCount() > 0)
    backends.push_back(Backend::CUDA);
  for (const Backend b : backends)
    for (unsigned k = 0; k < 8; ++k)
    {
      auto              w        = MakeWorkload(k, 900 + k);
      const Fingerprint expected = w->run(b, 0);
      ASSERT_FALSE(w->filters.empty()) << w->name;
      for (itk::ProcessObject * f : w->filters)
      {
        const std::string what =
          w->name + " (" + f->GetNameOfClass() + ", " + (b == Backend::CPU ? "CPU" : "CUDA") + ")";
        std::vector<float> seen;
        const auto         tag =
          f->AddObserver(itk::ProgressEvent(), [&](const itk::EventObject &) { seen.push_back(f->GetProgress()); });
        EXPECT_TRUE(w->run(b, 0) == expected) << what;
        f->RemoveObserver(tag);
        ASSERT_FALSE(seen.empty()) << what;
        EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end())) << what;
        EXPECT_EQ(seen.back(), 1.0f) << what;
        const auto between = std::count_if(seen.begin(), seen.end(), [](float p) { return p > 0.0f && p < 1.0f; });
        EXPECT_GE(between, b == Backend::CPU ? 10 : 1) << what;

        bool       asked    = false;
        const auto abortTag = f->AddObserver(itk::ProgressEvent(),
                                             [&](const itk::EventObject &)
                                             {
                                               const float p = f->GetProgress();
                                               if (!asked && p > 0.0f && p < 1.0f)
                                               {
                                                 asked = true;
                                                 f->AbortGenerateDataOn();
                                               }
                                             });
        EXPECT_THROW(w->run(b, 0), itk::ProcessAborted) << what;
        f->RemoveObserver(abortTag);
        EXPECT_TRUE(asked) << what;
        EXPECT_TRUE(w->released()) << what << ": an output kept its buffer";
        w->reset();
        EXPECT_TRUE(w->run(b, 0) == expected) << what << ": the update after the abort";
      }
    }
}

/** Soak: each algorithm's filters updated CHS_SOAK_RUNS times on the GPU, on inputs 4 times larger along each axis
 * than the other tests' (skipped when it is not set; the GPU machine's run sets 2000). The eight algorithms take turns
 * (round r runs each once), as in a session that uses several filters, and so that each algorithm's windows of 100
 * runs span seconds of the process's life rather than tenths: a soak of one algorithm at a time saw its 100-run
 * medians move in waves of +-20% within a second that nothing in the process explained. After the first 100 rounds,
 * host resident memory and device memory in use (after the pool has handed back what it caches) stay within 1%; each
 * algorithm's last 100 runs' median time of the filters' Update() calls is within 10% of its first 100's; every result
 * equals the first. Writes the figures to CHS_SOAK_REPORT (JSON lines) when it is set. */
TEST(Reliability, GPUSoakEveryAlgorithm)
{
  CHS_REQUIRE_GPU();
  const char * runsText = std::getenv("CHS_SOAK_RUNS");
  if (!runsText)
    GTEST_SKIP() << "set CHS_SOAK_RUNS (the GPU machine's run sets 2000)";
  const int     runs = std::max(300, std::atoi(runsText));
  std::ofstream report;
  if (const char * file = std::getenv("CHS_SOAK_REPORT"))
    report.open(file);
  std::vector<std::shared_ptr<Workload>> workloads;
  std::vector<Fingerprint>               expected;
  for (unsigned k = 0; k < 8; ++k)
  {
    workloads.push_back(MakeWorkload(k, 500 + k, 0, 4));
    expected.push_back(workloads.back()->run(Backend::CUDA, 0));
  }
  std::vector<std::vector<double>> ms(8);
  std::vector<int>                 mismatches(8, 0);
  uint64_t                         hostStart = 0, deviceFreeStart = 0, deviceFreeEnd = 0, total = 0;
  for (int r = 0; r < runs; ++r)
  {
    if (r == 100)
    {
      hostStart = ResidentBytes();
      chs::CudaDeviceMemoryInfo(0, deviceFreeStart, total);
    }
    for (unsigned k = 0; k < 8; ++k)
    {
      mismatches[k] += workloads[k]->run(Backend::CUDA, 0) != expected[k];
      ms[k].push_back(workloads[k]->updateMs); // the filters' Update() calls, without the fingerprint
    }
  }
  const uint64_t hostEnd = ResidentBytes();
  chs::CudaDeviceMemoryInfo(0, deviceFreeEnd, total);
  const double hostDrift = (double(hostEnd) - double(hostStart)) / double(hostStart);
  // Device memory in use: total - free, after the pool trims.
  const double usedStart = double(total - deviceFreeStart), usedEnd = double(total - deviceFreeEnd);
  const double deviceDrift = (usedEnd - usedStart) / usedStart;
  std::cout << runs << " rounds of the eight algorithms; host RSS " << hostStart << " -> " << hostEnd << " bytes ("
            << 100 * hostDrift << "%), device memory in use " << usedStart << " -> " << usedEnd << " bytes ("
            << 100 * deviceDrift << "%)\n";
  EXPECT_LE(std::abs(hostDrift), 0.01);
  EXPECT_LE(std::abs(deviceDrift), 0.01);
  for (unsigned k = 0; k < 8; ++k)
  {
    const auto & w     = *workloads[k];
    const double first = Median(std::vector<double>(ms[k].begin(), ms[k].begin() + 100));
    const double last  = Median(std::vector<double>(ms[k].end() - 100, ms[k].end()));
    std::cout << w.name << ": median ms first 100 " << first << ", last 100 " << last << '\n';
    if (report)
      report << "{\"algorithm\": \"" << w.name << "\", \"runs\": " << runs << ", \"host_rss_start\": " << hostStart
             << ", \"host_rss_end\": " << hostEnd << ", \"device_used_start\": " << uint64_t(usedStart)
             << ", \"device_used_end\": " << uint64_t(usedEnd) << ", \"median_ms_first_100\": " << first
             << ", \"median_ms_last_100\": " << last << ", \"mismatches\": " << mismatches[k]
             << ", \"median_ms_per_100\": [" << BlockMedians(ms[k], 100) << "]}\n";
    EXPECT_EQ(mismatches[k], 0) << w.name;
    EXPECT_LE(last, 1.1 * first) << w.name;
  }
}

// A GPU older than every architecture built is not counted as usable, so that Auto runs the CPU reference on it
// instead of failing at the first kernel; the reason names the device and both capabilities.
TEST(Reliability, DevicesOlderThanTheBuildAreNotUsable)
{
  const int oldest = chs::OldestComputeCapability();
  ASSERT_GE(oldest, 50) << "the core is compiled by nvcc, which names its architectures";
  std::string why;
  EXPECT_TRUE(chs::testing::DeviceRunsLibraryCode(oldest, &why, 0));
  EXPECT_TRUE(chs::testing::DeviceRunsLibraryCode(oldest + 10, &why, 0));
  EXPECT_TRUE(why.empty()) << why;
  EXPECT_FALSE(chs::testing::DeviceRunsLibraryCode(oldest - 1, &why, 3));
  const std::string expected = "device 3 has compute capability " + std::to_string((oldest - 1) / 10) + "." +
                               std::to_string((oldest - 1) % 10) + ", older than the oldest this build";
  EXPECT_EQ(why.rfind(expected, 0), 0u) << why;
  // On this machine: every device counted runs the library's code (a GPU run checks it on a real device).
  std::string reason;
  const int   count = chs::CudaDeviceCount(&reason);
  EXPECT_TRUE(count > 0 || !reason.empty());
}
