#include "textflag.h"

// The UTF-8 check of Keiser and Lemire ("Validating UTF-8 in less than one
// instruction per byte", 2021): three nibble lookups classify every pair of
// adjacent bytes, and two saturating subtractions say where a third or
// fourth byte of a sequence must be a continuation. Any bit left set in the
// accumulated error is invalid UTF-8.

// Error bits.
// 0x01 too short   0x02 too long      0x04 overlong 3   0x08 too large
// 0x10 surrogate   0x20 overlong 2    0x40 too large 1000 / overlong 4
// 0x80 two continuations

// byte 1, high nibble
DATA b1hi<>+0(SB)/8, $0x0202020202020202
DATA b1hi<>+8(SB)/8, $0x4915012180808080
GLOBL b1hi<>(SB), RODATA|NOPTR, $16

// byte 1, low nibble
DATA b1lo<>+0(SB)/8, $0xcbcbcb8b8383a3e7
DATA b1lo<>+8(SB)/8, $0xcbcbdbcbcbcbcbcb
GLOBL b1lo<>(SB), RODATA|NOPTR, $16

// byte 2, high nibble
DATA b2hi<>+0(SB)/8, $0x0101010101010101
DATA b2hi<>+8(SB)/8, $0x01010101babaaee6
GLOBL b2hi<>(SB), RODATA|NOPTR, $16

// SPLAT32 defines name as 32 bytes, each of them the byte in the 8-byte
// pattern v.
#define SPLAT32(name, v) \
	DATA name+0(SB)/8, v; \
	DATA name+8(SB)/8, v; \
	DATA name+16(SB)/8, v; \
	DATA name+24(SB)/8, v; \
	GLOBL name(SB), RODATA|NOPTR, $32

SPLAT32(c80<>, $0x8080808080808080)

// Bytes for the AVX-512 routine to broadcast.
DATA c0f<>+0(SB)/1, $0x0f
GLOBL c0f<>(SB), RODATA|NOPTR, $1
DATA c60<>+0(SB)/1, $0x60
GLOBL c60<>(SB), RODATA|NOPTR, $1
DATA c70<>+0(SB)/1, $0x70
GLOBL c70<>(SB), RODATA|NOPTR, $1

// BCAST sets every byte of Y to v.
#define BCAST(v, X, Y) \
	MOVL $v, AX; \
	VMOVD AX, X; \
	VPBROADCASTB X, Y

// BLOCK checks the 32 bytes in Y0 against the 32 before them in Y15,
// ORs what is wrong into Y14, and leaves Y0 in Y15.
#define BLOCK \
	VPERM2I128 $0x21, Y0, Y15, Y1; \
	VPALIGNR   $15, Y1, Y0, Y2; \
	VPALIGNR   $14, Y1, Y0, Y3; \
	VPALIGNR   $13, Y1, Y0, Y4; \
	VPSRLW     $4, Y2, Y5; \
	VPAND      Y10, Y5, Y5; \
	VPSHUFB    Y5, Y13, Y5; \
	VPAND      Y10, Y2, Y6; \
	VPSHUFB    Y6, Y12, Y6; \
	VPSRLW     $4, Y0, Y8; \
	VPAND      Y10, Y8, Y8; \
	VPSHUFB    Y8, Y11, Y8; \
	VPAND      Y6, Y5, Y5; \
	VPAND      Y8, Y5, Y5; \
	VPSUBUSB   Y9, Y3, Y3; \
	VPSUBUSB   Y7, Y4, Y4; \
	VPOR       Y4, Y3, Y3; \
	VPAND      c80<>(SB), Y3, Y3; \
	VPXOR      Y5, Y3, Y3; \
	VPOR       Y3, Y14, Y14; \
	VMOVDQA    Y0, Y15

// TABLES loads BLOCK's lookup tables and constants, and clears its
// carried block (Y15) and accumulated error (Y14).
#define TABLES \
	VBROADCASTI128 b1hi<>(SB), Y13; \
	VBROADCASTI128 b1lo<>(SB), Y12; \
	VBROADCASTI128 b2hi<>(SB), Y11; \
	BCAST(0x0f, X10, Y10); \
	BCAST(0x60, X9, Y9); \
	BCAST(0x70, X7, Y7); \
	VPXOR Y15, Y15, Y15; \
	VPXOR Y14, Y14, Y14

// Broadcast constants for MARK, read from memory: BLOCK leaves no register free.
SPLAT32(cquote<>, $0x2222222222222222)

SPLAT32(cbslash<>, $0x5c5c5c5c5c5c5c5c)

SPLAT32(cctl<>, $0x1f1f1f1f1f1f1f1f)

// MARK stores at (DI), and steps DI past, a 32-bit mask of the bytes in Y0
// that are '"', '\\' or a control byte.
#define MARK \
	VPCMPEQB  cquote<>(SB), Y0, Y1; \
	VPCMPEQB  cbslash<>(SB), Y0, Y2; \
	VPMINUB   cctl<>(SB), Y0, Y3; \
	VPCMPEQB  Y3, Y0, Y3; \
	VPOR      Y2, Y1, Y1; \
	VPOR      Y3, Y1, Y1; \
	VPMOVMSKB Y1, AX; \
	MOVL      AX, (DI); \
	ADDQ      $4, DI

// func markAVX2(b []byte, tail *[32]byte, stops *uint32) bool
//
// Checks the UTF-8 of b, whose length is a multiple of 32, then of the 32
// bytes of tail as if they followed it; and stores, for each 32 bytes of b
// and then for tail, the mask of bytes where a string scan must stop:
// len(b)/32+1 words.
TEXT ·markAVX2(SB), NOSPLIT, $0-41
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	MOVQ tail+24(FP), DX
	MOVQ stops+32(FP), DI
	TABLES

mloop:
	CMPQ CX, $32
	JB   mlast
	VMOVDQU (SI), Y0
	BLOCK
	MARK
	ADDQ $32, SI
	SUBQ $32, CX
	JMP  mloop

mlast:
	VMOVDQU (DX), Y0
	BLOCK
	MARK
	VPTEST Y14, Y14
	SETEQ  ret+40(FP)
	VZEROUPPER
	RET

// The same check and marks with AVX-512, 64 bytes at a step: every table
// and constant in a register of its own, and the marks made in mask
// registers, one 64-bit word a block.

// BLOCK64 checks the 64 bytes in Z0 against the 64 before them in Z15,
// ORs what is wrong into Z14, and leaves Z0 in Z15.
#define BLOCK64 \
	VALIGNQ    $6, Z15, Z0, Z1; \
	VPALIGNR   $15, Z1, Z0, Z2; \
	VPALIGNR   $14, Z1, Z0, Z3; \
	VPALIGNR   $13, Z1, Z0, Z4; \
	VPSRLW     $4, Z2, Z5; \
	VPANDQ     Z10, Z5, Z5; \
	VPSHUFB    Z5, Z13, Z5; \
	VPANDQ     Z10, Z2, Z19; \
	VPSHUFB    Z19, Z12, Z19; \
	VPSRLW     $4, Z0, Z8; \
	VPANDQ     Z10, Z8, Z8; \
	VPSHUFB    Z8, Z11, Z8; \
	VPANDQ     Z19, Z5, Z5; \
	VPANDQ     Z8, Z5, Z5; \
	VPSUBUSB   Z9, Z3, Z3; \
	VPSUBUSB   Z7, Z4, Z4; \
	VPORQ      Z4, Z3, Z3; \
	VPANDQ     Z6, Z3, Z3; \
	VPXORQ     Z5, Z3, Z3; \
	VPORQ      Z3, Z14, Z14; \
	VMOVDQA64  Z0, Z15

// MARK64 stores at (DI), and steps DI past, the 64-bit mask of the bytes
// in Z0 that are '"', '\\' or a control byte.
#define MARK64 \
	VPCMPEQB  Z16, Z0, K1; \
	VPCMPEQB  Z17, Z0, K2; \
	VPMINUB   Z18, Z0, Z20; \
	VPCMPEQB  Z20, Z0, K3; \
	KORQ      K1, K2, K1; \
	KORQ      K1, K3, K1; \
	KMOVQ     K1, AX; \
	MOVQ      AX, (DI); \
	ADDQ      $8, DI

// func markAVX512(b []byte, stops *uint64) bool
//
// markAVX2 for any b, with one word of stops per 64 bytes and one for the
// bytes after the last whole 64: len(b)/64+1 words. The last block is read
// under a mask, which touches no byte past the end, and the bytes it does
// not read are zeros: control bytes, stops.
TEXT ·markAVX512(SB), NOSPLIT, $0-33
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	MOVQ stops+24(FP), DI
	VBROADCASTI32X4 b1hi<>(SB), Z13
	VBROADCASTI32X4 b1lo<>(SB), Z12
	VBROADCASTI32X4 b2hi<>(SB), Z11
	VPBROADCASTB c0f<>(SB), Z10
	VPBROADCASTB c60<>(SB), Z9
	VPBROADCASTB c70<>(SB), Z7
	VPBROADCASTB c80<>(SB), Z6
	VPBROADCASTB cquote<>(SB), Z16
	VPBROADCASTB cbslash<>(SB), Z17
	VPBROADCASTB cctl<>(SB), Z18
	VPXORQ Z15, Z15, Z15
	VPXORQ Z14, Z14, Z14

wloop:
	CMPQ CX, $64
	JB   wlast
	VMOVDQU64 (SI), Z0
	BLOCK64
	MARK64
	ADDQ $64, SI
	SUBQ $64, CX
	JMP  wloop

wlast:
	MOVQ $-1, AX
	SHLXQ CX, AX, AX
	NOTQ AX // the low len(b)%64 bits
	KMOVQ AX, K4
	VMOVDQU8.Z (SI), K4, Z0
	BLOCK64
	MARK64
	VPTESTMD  Z14, Z14, K1
	KORTESTW  K1, K1
	SETEQ     ret+32(FP)
	VZEROUPPER
	RET
