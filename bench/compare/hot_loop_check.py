"""Checks sass.hot_loop on small cuobjdump-style listings: a loop is found
and its body counted; a block laid out after EXIT that branches back to the
main path (a divergent shuffle's fallback) is not a loop."""

import sass

LOOP = """
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0010*/                   HMMA.16816.F32 R4, R8, R12, R4 ;
        /*0020*/                   LDS R2, [R3] ;
        /*0030*/              @P0 BRA 0x10 ;
        /*0040*/                   EXIT ;
        /*0050*/                   BRA 0x50 ;
"""

FALLBACK = """
        /*0000*/                   BRA.DIV UR4, 0x40 ;
        /*0010*/                   SHFL.BFLY PT, R14, R15, 0x1, 0x1f ;
        /*0020*/              @P4 EXIT ;
        /*0030*/                   EXIT ;
        /*0040*/                   WARPSYNC.COLLECTIVE R20, 0x60 ;
        /*0050*/                   SHFL.BFLY P5, R18, R15, R21, R22 ;
        /*0060*/                   BRA 0x10 ;
"""


def main():
    loop = sass.hot_loop(sass.parse_sass(LOOP))
    counts = sass.class_counts(loop or [])
    if [i.address for i in loop or []] != [0x10, 0x20, 0x30] or counts["MMA"] != 1 or counts["LDS/STS"] != 1:
        raise SystemExit(f"hot_loop_check.py: the loop at 0x10..0x30 was read as {loop}")
    fallback = sass.hot_loop(sass.parse_sass(FALLBACK))
    if fallback is not None:
        raise SystemExit(f"hot_loop_check.py: a fallback block branching back over EXIT was read as a loop: {fallback}")
    print("hot_loop_check.py: a loop is found, a branch back over EXIT is not")


if __name__ == "__main__":
    main()
