; not_for_target_pass.s with one planted violation (cmake/asm_checks.cmake; README.md): the gfx942
; pass of a gfx950-only kernel does work before its trap. The line after each `; PLANTED <rule>...`
; comment is where the checker must report those rules, and nothing else may be reported.
	.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
	.amdhsa_code_object_version 6
	.text
	.globl	_ZN7vaeconv6kernel11conv_kernelINS0_10TilePolicyINS0_9TileShapeILi256ELi96ELi32ELi4ELi1ELi3ELi1EEENS_4arch14CdnaGfx950OnlyENS5_4Cdna10AtomBf16OfILi32EEELb0EEENS0_8GeometryILi1ELi1ELi1ELi3EEELb1EEEvNS0_10ConvParamsE
	.p2align	8
	.type	_ZN7vaeconv6kernel11conv_kernelINS0_10TilePolicyINS0_9TileShapeILi256ELi96ELi32ELi4ELi1ELi3ELi1EEENS_4arch14CdnaGfx950OnlyENS5_4Cdna10AtomBf16OfILi32EEELb0EEENS0_8GeometryILi1ELi1ELi1ELi3EEELb1EEEvNS0_10ConvParamsE,@function
_ZN7vaeconv6kernel11conv_kernelINS0_10TilePolicyINS0_9TileShapeILi256ELi96ELi32ELi4ELi1ELi3ELi1EEENS_4arch14CdnaGfx950OnlyENS5_4Cdna10AtomBf16OfILi32EEELb0EEENS0_8GeometryILi1ELi1ELi1ELi3EEELb1EEEvNS0_10ConvParamsE: ; @_ZN7vaeconv6kernel11conv_kernelINS0_10TilePolicyINS0_9TileShapeILi256ELi96ELi32ELi4ELi1ELi3ELi1EEENS_4arch14CdnaGfx950OnlyENS5_4Cdna10AtomBf16OfILi32EEELb0EEENS0_8GeometryILi1ELi1ELi1ELi3EEELb1EEEvNS0_10ConvParamsE
; %bb.0:
; PLANTED not-for-target
	v_mov_b32_e32 v0, 0
	s_trap 2
	s_endpgm
	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel _ZN7vaeconv6kernel11conv_kernelINS0_10TilePolicyINS0_9TileShapeILi256ELi96ELi32ELi4ELi1ELi3ELi1EEENS_4arch14CdnaGfx950OnlyENS5_4Cdna10AtomBf16OfILi32EEELb0EEENS0_8GeometryILi1ELi1ELi1ELi3EEELb1EEEvNS0_10ConvParamsE
		.amdhsa_group_segment_fixed_size 0
		.amdhsa_private_segment_fixed_size 0
		.amdhsa_float_round_mode_32 0
		.amdhsa_float_denorm_mode_32 3
		.amdhsa_float_denorm_mode_16_64 3
	.end_amdhsa_kernel
	.text
.Lfunc_end0:
	.size	_ZN7vaeconv6kernel11conv_kernelINS0_10TilePolicyINS0_9TileShapeILi256ELi96ELi32ELi4ELi1ELi3ELi1EEENS_4arch14CdnaGfx950OnlyENS5_4Cdna10AtomBf16OfILi32EEELb0EEENS0_8GeometryILi1ELi1ELi1ELi3EEELb1EEEvNS0_10ConvParamsE, .Lfunc_end0-_ZN7vaeconv6kernel11conv_kernelINS0_10TilePolicyINS0_9TileShapeILi256ELi96ELi32ELi4ELi1ELi3ELi1EEENS_4arch14CdnaGfx950OnlyENS5_4Cdna10AtomBf16OfILi32EEELb0EEENS0_8GeometryILi1ELi1ELi1ELi3EEELb1EEEvNS0_10ConvParamsE
                                        ; -- End function
	.section	.AMDGPU.csdata,"",@progbits
; Kernel info:
; TotalNumSgprs: 0
; NumVgprs: 0
; NumAgprs: 0
; ScratchSize: 0
; LDSByteSize: 0 bytes/workgroup (compile time only)
; Occupancy: 8
