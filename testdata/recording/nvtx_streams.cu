// nvtx_streams.cu: a small CUDA C++ workload with NVTX3 annotations, used to
// record a real Nsight Systems export that exercises what the PyTorch fixtures
// lack: a named NVTX domain, categories, registered strings, payloads, push/pop
// and start/end ranges (some ending on another thread), thread and stream names,
// events and cross-stream waits, pinned and pageable copies (H2D, D2H, D2D),
// memsets, stream-ordered pool allocations and one cudaDeviceSynchronize a step.
//
// Structure (domain "pipeline" unless noted):
//   :setup (default domain, push/pop)
//   warmup                                   5 steps of the streams1 arm
//   arm=<streams1|streams4> block=<b>        interleaved, --blocks each, --steps each
//     step            payload u64 = global step index, category "step"
//       upload        pinned H2D per chunk, pageable H2D of params, cudaMemsetAsync,
//                     cudaMallocFromPoolAsync staging, event + cudaStreamWaitEvent
//       compute       cudaMallocAsync scratch, 2 kernels per chunk, D2D copy,
//                     cudaFreeAsync, event per stream joined on stream 0
//       readback      pinned D2H, event; start/end range "inflight" ended by the
//                     completion thread after cudaEventSynchronize; pageable
//                     4-byte D2H (scalar read: blocking cudaMemcpy)
//       reset         every 4th step: reset kernel + cudaMemset; always
//                     cudaDeviceSynchronize
//     drain           start/end range on the main thread (ends on the same thread)
//   marks: "block_start" (domain, payload i32 = block), "done" (default domain)
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90 -o nvtx_streams nvtx_streams.cu -lpthread -ldl
// Run:   ./nvtx_streams --manifest out.manifest.json [--blocks 3 --steps 30]
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCudaRt.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef __CUDACC__
#define LAUNCH(k, grid, block, stream, ...) k<<<(grid), (block), 0, (stream)>>>(__VA_ARGS__)
#else  // host-only syntax check with a mock runtime
#define LAUNCH(k, grid, block, stream, ...) k(__VA_ARGS__)
#endif

#define CK(x)                                                                   \
    do {                                                                        \
        cudaError_t e_ = (x);                                                   \
        if (e_ != cudaSuccess) {                                                \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x,          \
                    cudaGetErrorString(e_));                                    \
            exit(1);                                                            \
        }                                                                       \
    } while (0)

static const int kChunks = 4;
static const int kThreads = 256;
static const int kRing = 64;

__global__ void fma_iter(const float* in, float* out, const float* params, int n, int iters) {
#ifdef __CUDACC__
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = in[i], a = params[0], b = params[1];
    for (int k = 0; k < iters; ++k) x = fmaf(x, a, b);
    out[i] = x;
#endif
}

__global__ void reduce_sum(const float* in, float* acc, int n) {
#ifdef __CUDACC__
    __shared__ float s[kThreads];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(acc, s[0]);
#endif
}

__global__ void reset_kernel(float* buf, int n) {
#ifdef __CUDACC__
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) buf[i] = 0.0f;
#endif
}

// ---- NVTX helpers ---------------------------------------------------------
enum Cat : uint32_t { CAT_STEP = 1, CAT_H2D = 2, CAT_COMPUTE = 3, CAT_D2H = 4, CAT_RESET = 5, CAT_ARM = 6 };

static nvtxDomainHandle_t g_dom;
static nvtxStringHandle_t s_step, s_upload, s_compute, s_readback, s_reset, s_inflight, s_drain, s_warmup;

static nvtxEventAttributes_t attrs(uint32_t cat, uint32_t argb) {
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.category = cat;
    a.colorType = NVTX_COLOR_ARGB;
    a.color = argb;
    return a;
}
static void push_reg(nvtxStringHandle_t s, uint32_t cat, uint32_t argb) {
    nvtxEventAttributes_t a = attrs(cat, argb);
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = s;
    nvtxDomainRangePushEx(g_dom, &a);
}
static void push_reg_u64(nvtxStringHandle_t s, uint32_t cat, uint32_t argb, uint64_t v) {
    nvtxEventAttributes_t a = attrs(cat, argb);
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = s;
    a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    a.payload.ullValue = v;
    nvtxDomainRangePushEx(g_dom, &a);
}
static void push_reg_i32(nvtxStringHandle_t s, uint32_t cat, uint32_t argb, int32_t v) {
    nvtxEventAttributes_t a = attrs(cat, argb);
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = s;
    a.payloadType = NVTX_PAYLOAD_TYPE_INT32;
    a.payload.iValue = v;
    nvtxDomainRangePushEx(g_dom, &a);
}
static void push_reg_f64(nvtxStringHandle_t s, uint32_t cat, uint32_t argb, double v) {
    nvtxEventAttributes_t a = attrs(cat, argb);
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = s;
    a.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
    a.payload.dValue = v;
    nvtxDomainRangePushEx(g_dom, &a);
}
static void push_ascii(const char* msg, uint32_t cat, uint32_t argb) {
    nvtxEventAttributes_t a = attrs(cat, argb);
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = msg;
    nvtxDomainRangePushEx(g_dom, &a);
}
static void pop() { nvtxDomainRangePop(g_dom); }
static nvtxRangeId_t start_reg_u64(nvtxStringHandle_t s, uint32_t cat, uint32_t argb, uint64_t v) {
    nvtxEventAttributes_t a = attrs(cat, argb);
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = s;
    a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    a.payload.ullValue = v;
    return nvtxDomainRangeStartEx(g_dom, &a);
}
static void mark_i32(const char* msg, int32_t v) {
    nvtxEventAttributes_t a = attrs(CAT_ARM, 0xFF808080u);
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = msg;
    a.payloadType = NVTX_PAYLOAD_TYPE_INT32;
    a.payload.iValue = v;
    nvtxDomainMarkEx(g_dom, &a);
}
static uint32_t gettid_() { return (uint32_t)syscall(SYS_gettid); }

// ---- completion thread: waits on readback events, ends "inflight" ranges ----
struct Pending {
    cudaEvent_t ev;
    nvtxRangeId_t rid;
    long step;
};
struct Completion {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<Pending> q;
    long done = -1;
    bool stop = false;
    std::thread th;

    void run(int dev) {
        CK(cudaSetDevice(dev));
        nvtxNameOsThreadA(gettid_(), "completion");
        for (;;) {
            Pending p;
            {
                std::unique_lock<std::mutex> lk(mu);
                cv.wait(lk, [&] { return stop || !q.empty(); });
                if (q.empty()) return;
                p = q.front();
                q.pop_front();
            }
            CK(cudaEventSynchronize(p.ev));
            nvtxDomainRangeEnd(g_dom, p.rid);  // started on the main thread
            {
                std::lock_guard<std::mutex> lk(mu);
                done = p.step;
            }
            cv.notify_all();
        }
    }
    void push(Pending p) {
        {
            std::lock_guard<std::mutex> lk(mu);
            q.push_back(p);
        }
        cv.notify_all();
    }
    void wait_until(long step) {
        std::unique_lock<std::mutex> lk(mu);
        cv.wait(lk, [&] { return done >= step; });
    }
    void finish() {
        {
            std::lock_guard<std::mutex> lk(mu);
            stop = true;
        }
        cv.notify_all();
        th.join();
    }
};

// ---- the workload ---------------------------------------------------------
struct Work {
    int n = 1 << 22;  // floats in the input (16 MiB), split into kChunks chunks
    int iters = 64;
    float *h_in = nullptr, *h_out = nullptr;   // pinned
    float *h_params = nullptr;                 // pageable
    float *d_in = nullptr, *d_prev = nullptr, *d_params = nullptr, *d_acc = nullptr, *d_flags = nullptr;
    cudaStream_t st[kChunks];
    cudaEvent_t ev_up, ev_join[kChunks], ev_ring[kRing];
    cudaMemPool_t pool;
    Completion comp;
};

static void step(Work& w, long gstep, int nstreams) {
    const int chunk = w.n / kChunks;
    const size_t chunkBytes = (size_t)chunk * sizeof(float);
    const int grid = (chunk + kThreads - 1) / kThreads;
    cudaStream_t s0 = w.st[0];

    // the ring slot must be free: its "inflight" range ended
    if (gstep >= kRing) w.comp.wait_until(gstep - kRing);

    push_reg_u64(s_step, CAT_STEP, 0xFF2E86C1u, (uint64_t)gstep);

    push_reg_i32(s_upload, CAT_H2D, 0xFF28B463u, (int32_t)(w.n * sizeof(float) / 1024));
    float* staging = nullptr;
    CK(cudaMallocFromPoolAsync((void**)&staging, 64 * 1024, w.pool, s0));
    for (int c = 0; c < kChunks; ++c)
        CK(cudaMemcpyAsync(w.d_in + (size_t)c * chunk, w.h_in + (size_t)c * chunk, chunkBytes,
                           cudaMemcpyHostToDevice, w.st[c % nstreams]));
    w.h_params[0] = 1.0001f + 1e-6f * (float)(gstep % 7);
    w.h_params[1] = 0.5f;
    // pageable source: the runtime stages it, the call returns late
    CK(cudaMemcpyAsync(w.d_params, w.h_params, 64 * 1024, cudaMemcpyHostToDevice, s0));
    CK(cudaMemcpyAsync(staging, w.d_params, 64 * 1024, cudaMemcpyDeviceToDevice, s0));
    CK(cudaMemsetAsync(w.d_acc, 0, kChunks * sizeof(float), s0));
    CK(cudaFreeAsync(staging, s0));
    CK(cudaEventRecord(w.ev_up, s0));
    for (int i = 1; i < nstreams; ++i) CK(cudaStreamWaitEvent(w.st[i], w.ev_up, 0));
    pop();

    push_reg_f64(s_compute, CAT_COMPUTE, 0xFFCA6F1Eu, (double)w.iters);
    for (int c = 0; c < kChunks; ++c) {
        cudaStream_t s = w.st[c % nstreams];
        float* scratch = nullptr;
        CK(cudaMallocAsync((void**)&scratch, chunkBytes, s));
        float* in = w.d_in + (size_t)c * chunk;
        LAUNCH(fma_iter, grid, kThreads, s, in, scratch, w.d_params, chunk, w.iters);
        LAUNCH(reduce_sum, grid, kThreads, s, scratch, w.d_acc + c, chunk);
        CK(cudaMemcpyAsync(w.d_prev + (size_t)c * chunk, scratch, chunkBytes, cudaMemcpyDeviceToDevice, s));
        CK(cudaFreeAsync(scratch, s));
    }
    CK(cudaGetLastError());
    for (int i = 1; i < nstreams; ++i) {
        CK(cudaEventRecord(w.ev_join[i], w.st[i]));
        CK(cudaStreamWaitEvent(s0, w.ev_join[i], 0));
    }
    pop();

    push_reg(s_readback, CAT_D2H, 0xFF8E44ADu);
    CK(cudaMemcpyAsync(w.h_out, w.d_acc, kChunks * sizeof(float), cudaMemcpyDeviceToHost, s0));
    CK(cudaMemcpyAsync(w.h_out + kChunks, w.d_prev, 1 << 20, cudaMemcpyDeviceToHost, s0));
    cudaEvent_t ev = w.ev_ring[gstep % kRing];
    CK(cudaEventRecord(ev, s0));
    nvtxRangeId_t rid = start_reg_u64(s_inflight, CAT_D2H, 0xFFAF7AC5u, (uint64_t)gstep);
    w.comp.push(Pending{ev, rid, gstep});
    float scalar = 0.0f;  // pageable 4-byte read: blocks the host
    CK(cudaMemcpy(&scalar, w.d_acc, sizeof(float), cudaMemcpyDeviceToHost));
    pop();

    push_reg(s_reset, CAT_RESET, 0xFFC0392Bu);
    if (gstep % 4 == 0) {  // data-dependent branch: GPU work on every 4th step only
        LAUNCH(reset_kernel, (w.n / 8 + kThreads - 1) / kThreads, kThreads, s0, w.d_prev, w.n / 8);
        CK(cudaMemset(w.d_flags, 0, 1 << 16));
    }
    CK(cudaDeviceSynchronize());
    pop();

    pop();  // step
}

static void usage() {
    fprintf(stderr, "usage: nvtx_streams --manifest PATH [--blocks N] [--steps N] [--warmup N]\n");
    exit(2);
}

int main(int argc, char** argv) {
    int blocks = 3, steps = 30, warm = 5;
    const char* manifest = nullptr;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (i + 1 >= argc) usage();
        if (a == "--blocks") blocks = atoi(argv[++i]);
        else if (a == "--steps") steps = atoi(argv[++i]);
        else if (a == "--warmup") warm = atoi(argv[++i]);
        else if (a == "--manifest") manifest = argv[++i];
        else usage();
    }
    if (!manifest) usage();

    nvtxNameOsThreadA(gettid_(), "main");
    nvtxRangePushA("setup");  // default domain
    g_dom = nvtxDomainCreateA("pipeline");
    nvtxDomainNameCategoryA(g_dom, CAT_STEP, "step");
    nvtxDomainNameCategoryA(g_dom, CAT_H2D, "h2d");
    nvtxDomainNameCategoryA(g_dom, CAT_COMPUTE, "compute");
    nvtxDomainNameCategoryA(g_dom, CAT_D2H, "d2h");
    nvtxDomainNameCategoryA(g_dom, CAT_RESET, "reset");
    nvtxDomainNameCategoryA(g_dom, CAT_ARM, "arm");
    s_step = nvtxDomainRegisterStringA(g_dom, "step");
    s_upload = nvtxDomainRegisterStringA(g_dom, "upload");
    s_compute = nvtxDomainRegisterStringA(g_dom, "compute");
    s_readback = nvtxDomainRegisterStringA(g_dom, "readback");
    s_reset = nvtxDomainRegisterStringA(g_dom, "reset");
    s_inflight = nvtxDomainRegisterStringA(g_dom, "inflight");
    s_drain = nvtxDomainRegisterStringA(g_dom, "drain");
    s_warmup = nvtxDomainRegisterStringA(g_dom, "warmup");

    int dev = 0;
    CK(cudaSetDevice(dev));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    int rtv = 0, drv = 0;
    CK(cudaRuntimeGetVersion(&rtv));
    CK(cudaDriverGetVersion(&drv));

    Work w;
    const size_t bytes = (size_t)w.n * sizeof(float);
    CK(cudaMallocHost((void**)&w.h_in, bytes));
    CK(cudaMallocHost((void**)&w.h_out, (1 << 20) + 64));
    w.h_params = (float*)malloc(64 * 1024);
    memset(w.h_params, 0, 64 * 1024);
    for (int i = 0; i < w.n; ++i) w.h_in[i] = (float)(i % 1000) * 1e-3f;
    CK(cudaMalloc((void**)&w.d_in, bytes));
    CK(cudaMalloc((void**)&w.d_prev, bytes));
    CK(cudaMalloc((void**)&w.d_params, 64 * 1024));
    CK(cudaMalloc((void**)&w.d_acc, 64 * sizeof(float)));
    CK(cudaMalloc((void**)&w.d_flags, 1 << 16));
    for (int i = 0; i < kChunks; ++i) {
        CK(cudaStreamCreate(&w.st[i]));
        char name[32];
        snprintf(name, sizeof name, "work%d", i);
        nvtxNameCudaStreamA(w.st[i], name);
        CK(cudaEventCreateWithFlags(&w.ev_join[i], cudaEventDisableTiming));
    }
    CK(cudaEventCreateWithFlags(&w.ev_up, cudaEventDisableTiming));
    for (int i = 0; i < kRing; ++i) CK(cudaEventCreateWithFlags(&w.ev_ring[i], cudaEventDisableTiming));
    cudaMemPoolProps pp;
    memset(&pp, 0, sizeof pp);
    pp.allocType = cudaMemAllocationTypePinned;
    pp.handleTypes = cudaMemHandleTypeNone;
    pp.location.type = cudaMemLocationTypeDevice;
    pp.location.id = dev;
    CK(cudaMemPoolCreate(&w.pool, &pp));
    uint64_t keep = UINT64_MAX;  // the explicit pool keeps its memory; the default pool releases at sync
    CK(cudaMemPoolSetAttribute(w.pool, cudaMemPoolAttrReleaseThreshold, &keep));
    cudaEvent_t t0, t1;
    CK(cudaEventCreate(&t0));
    CK(cudaEventCreate(&t1));
    w.comp.th = std::thread([&w, dev] { w.comp.run(dev); });
    CK(cudaDeviceSynchronize());
    nvtxRangePop();  // setup

    long gstep = 0;
    push_reg(s_warmup, CAT_ARM, 0xFF7F8C8Du);
    for (int s = 0; s < warm; ++s) step(w, gstep++, 1);
    pop();

    struct Block {
        std::string arm;
        int block, steps;
        long long wall_ns;
        float gpu_ms;
    };
    std::vector<Block> done;
    const char* arms[2] = {"streams1", "streams4"};
    const int nstr[2] = {1, 4};
    for (int b = 0; b < blocks; ++b) {
        for (int a = 0; a < 2; ++a) {
            char name[64];
            snprintf(name, sizeof name, "arm=%s block=%d", arms[a], b);
            auto t_start = std::chrono::steady_clock::now();
            mark_i32("block_start", b);
            push_ascii(name, CAT_ARM, 0xFF17A589u);
            CK(cudaEventRecord(t0, w.st[0]));
            for (int s = 0; s < steps; ++s) step(w, gstep++, nstr[a]);
            nvtxRangeId_t dr = start_reg_u64(s_drain, CAT_ARM, 0xFF5D6D7Eu, (uint64_t)b);
            w.comp.wait_until(gstep - 1);
            CK(cudaEventRecord(t1, w.st[0]));
            CK(cudaEventSynchronize(t1));
            nvtxDomainRangeEnd(g_dom, dr);  // same thread
            pop();
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, t0, t1));
            long long wall = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::steady_clock::now() - t_start).count();
            done.push_back(Block{arms[a], b, steps, wall, ms});
        }
    }
    nvtxMarkA("done");  // default domain
    w.comp.finish();

    FILE* f = fopen(manifest, "w");
    if (!f) {
        perror(manifest);
        return 1;
    }
    fprintf(f, "{\n  \"schema\": \"nvtx-streams-run-manifest/1\",\n  \"program\": \"testdata/recording/nvtx_streams.cu\",\n");
    fprintf(f, "  \"nvtx_domain\": \"pipeline\",\n  \"arms\": [\"streams1\", \"streams4\"],\n");
    fprintf(f, "  \"warmup_steps\": %d, \"blocks_per_arm\": %d, \"steps_per_block\": %d, \"total_steps\": %ld,\n", warm, blocks, steps, gstep);
    fprintf(f, "  \"floats\": %d, \"chunks\": %d, \"fma_iters\": %d,\n", w.n, kChunks, w.iters);
    fprintf(f, "  \"blocks\": [\n");
    for (size_t i = 0; i < done.size(); ++i)
        fprintf(f, "    {\"arm\": \"%s\", \"block\": %d, \"steps\": %d, \"wall_ns\": %lld, \"gpu_event_ms\": %.4f}%s\n",
                done[i].arm.c_str(), done[i].block, done[i].steps, done[i].wall_ns, done[i].gpu_ms,
                i + 1 < done.size() ? "," : "");
    fprintf(f, "  ],\n  \"gpu\": {\"name\": \"%s\", \"cc\": \"%d.%d\", \"sms\": %d},\n", prop.name, prop.major, prop.minor,
            prop.multiProcessorCount);
    fprintf(f, "  \"versions\": {\"cuda_runtime\": %d, \"cuda_driver\": %d}\n}\n", rtv, drv);
    fclose(f);
    printf("ok: %ld steps, scalar check %g\n", gstep, (double)w.h_out[0]);
    return 0;
}
