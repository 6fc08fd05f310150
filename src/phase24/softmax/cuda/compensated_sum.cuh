// A float sum whose error does not grow with the number of terms (v0 introduced it; v1 and v2 use
// it too): CompensatedSum, and run_sum, which adds plainly in runs and compensates run by run.
#pragma once

// --8<-- [start:compensated]
// A float sum that also keeps what each addition rounds away (Neumaier's form of Kahan's
// compensated sum), folded back into the sum after every addition so that the correction c
// stays below half a rounding of s: s + c stays within a few roundings of the exact sum however
// many terms are added. A plain running sum of n terms drifts by up to n roundings, and mostly
// downwards once the terms are small next to the sum, so its error grows with n; so does an
// unfolded correction, itself a plain sum of everything s cannot hold (past ~2^24 terms, all of
// them). For the rungs whose threads add many terms in order: v0 (N terms), v1 and v2 (N / 256).
struct CompensatedSum {
    float s = 0.f, c = 0.f;
    __device__ __forceinline__ void add(float v) {
        const float t = s + v;
        const float lost = fabsf(s) >= fabsf(v) ? (s - t) + v : (v - t) + s;  // exactly
        const float u = c + lost;
        s = t + u;        // fold the correction in; c keeps what that addition rounds away
        c = u - (s - t);
    }
    __device__ __forceinline__ void scale(float w) { s *= w, c *= w; }
    __device__ __forceinline__ float value() const { return s + c; }
};

// The sum of term(j) for j = begin, begin + step, ... below end, added plainly in runs of RUN
// terms and each run's total into a CompensatedSum: the loop over a run is a plain loop (one
// addition per term, unrolled, its loads in flight together), the compensated addition comes
// once per run, and the sum is as accurate (a run rounds at most RUN times, against its own
// small total). For v0's and v1's threads, which add N and N / 256 terms one after another.
// A thread with one run or less adds plainly, as a compensated sum of one term would give the
// same float; on short rows the per-row instructions are what count.
template <int RUN = 32, typename Term>
__device__ __forceinline__ float run_sum(int begin, int end, int step, Term term) {
    auto plain = [&](int from, int stop) {
        float part = 0.f;
        for (int j = from; j < stop; j += step) part += term(j);
        return part;
    };
    if (end - begin <= RUN * step) return plain(begin, end);  // one run: nothing to compensate
    CompensatedSum total;
    for (int run = begin; run < end; run += RUN * step)
        total.add(plain(run, min(end, run + RUN * step)));
    return total.value();
}
// --8<-- [end:compensated]
